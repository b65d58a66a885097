/**
 * `npx tsx bench/limits-inprocess.ts [--write]`: the whole request path with
 * the limits on against off, in one process, without sockets: three apps built by
 * createApp over the embedded store (off, a second off as a control, and on with
 * RATE_LIMIT_RPS / GRAPHQL_COST_BUDGET so large nothing is refused), each request driven
 * through `app.callback()` by light-my-request (Fastify's request injector: real Koa chain,
 * auth, router, GraphQL handler, response writing; no kernel, no load generator). Rounds
 * alternate over the three apps (order reversed every round); a figure is the process's
 * CPU time per request (process.cpuUsage), the median of the rounds. The control shows
 * what two identical apps differ by, i.e. the resolution of the method; the socket-level
 * bench (bench:limits) cannot resolve 5 % on a shared 2-core machine.
 * The injector's own work is in every figure alike, so shares are of a larger total
 * than the server's alone (a conservative denominator is the service's CPU per request
 * from bench:limits, given beside).
 * BENCH_INPROC_REQUESTS (3000 per round), BENCH_INPROC_ROUNDS (9), BENCH_INPROC_CONCURRENCY (20).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import inject from 'light-my-request';
import pino from 'pino';
import { parseConfig } from '../src/config';
import { createApp } from '../src/app';
import { Metrics } from '../src/http';
import { openConfiguredStore, prepareDemo } from '../src/startup';
import { envNumber as num } from './lib/env';
import { editBenchmarks, replaceBetween } from './lib/report';
import { SIMPLE } from './graphql-peers';

const N = num('BENCH_INPROC_REQUESTS', 3000);
const ROUNDS = num('BENCH_INPROC_ROUNDS', 9);
const C = num('BENCH_INPROC_CONCURRENCY', 20);
const ON = { RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000', GRAPHQL_COST_BUDGET: '1000000000', GRAPHQL_COST_RESTORE_RATE: '1000000000' };

type Handler = Parameters<typeof inject>[0];
interface App {
  cb: Handler;
  token: string;
  dir: string;
}

async function make(extra: Record<string, string>): Promise<App> {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-bench-inproc-'));
  const parsed = parseConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', NODE_ENV: 'production', ...extra });
  if (!parsed.ok) throw new Error(parsed.error);
  const store = await openConfiguredStore(parsed.config);
  const demo = await prepareDemo(parsed.config, store);
  if (!demo.token) throw new Error('no demo token');
  const { app } = createApp({ config: parsed.config, store, logger: pino({ level: 'silent' }), metrics: new Metrics() });
  const callback = app.callback();
  return { cb: (req, res) => void callback(req, res), token: demo.token, dir };
}

const requests = {
  GET: (a: App) => ({ method: 'GET' as const, url: '/orders/1', headers: { authorization: `Bearer ${a.token}` } }),
  GraphQL: (a: App) => ({ method: 'POST' as const, url: '/graphql', headers: { 'content-type': 'application/json', authorization: `Bearer ${a.token}` }, payload: JSON.stringify({ query: SIMPLE }) }),
};

async function cpuPerRequest(a: App, kind: keyof typeof requests): Promise<number> {
  const req = requests[kind](a);
  let left = N;
  const t = process.cpuUsage();
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (left-- > 0) {
        const res = await inject(a.cb, req);
        if (res.statusCode !== 200) throw new Error(`${kind} answered ${res.statusCode}: ${res.body}`);
      }
    }),
  );
  const d = process.cpuUsage(t);
  return (d.user + d.system) / N;
}

const median = (xs: number[]) => {
  const v = [...xs].sort((x, y) => x - y);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

async function main(): Promise<void> {
  const before = loadavg()[0];
  // The on app is built first, the control last: an order effect would show on the control, not favour the off app.
  const on = await make(ON);
  const apps: Record<'off' | 'control' | 'on', App> = { on, off: await make({}), control: await make({}) };
  const names = ['off', 'control', 'on'] as const;
  const rows: string[] = [];
  try {
    for (const kind of ['GET', 'GraphQL'] as const) {
      // Checked first: the on app adds its fields, the off apps do not.
      const on = await inject(apps.on.cb, requests[kind](apps.on));
      const off = await inject(apps.off.cb, requests[kind](apps.off));
      const marked = (r: typeof on) => (kind === 'GET' ? 'ratelimit' in r.headers : (JSON.parse(r.body) as { extensions?: unknown }).extensions !== undefined);
      if (!marked(on) || marked(off)) throw new Error(`${kind}: the on app must add the limit's fields and the off app must not`);
      for (const n of names) for (let i = 0; i < 2; i++) await cpuPerRequest(apps[n], kind); // warm-up
      const cpu: Record<string, number[]> = { off: [], control: [], on: [] };
      for (let r = 0; r < ROUNDS; r++) for (const n of r % 2 ? [...names].reverse() : names) cpu[n].push(await cpuPerRequest(apps[n], kind));
      const [o, c, n] = names.map((x) => median(cpu[x]));
      const pct = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)} %`;
      const what = kind === 'GET' ? 'GET /orders/1 (REST rate limit)' : `POST /graphql simple query \`${SIMPLE}\` (cost budget)`;
      rows.push(`| ${what} | ${o.toFixed(0)} | ${c.toFixed(0)} (${pct((c / o - 1) * 100)}) | ${n.toFixed(0)} | ${pct((n / o - 1) * 100)} | ${names.map((x) => cpu[x].map((v) => v.toFixed(0)).join(' ')).join(' / ')} |`);
      console.error(rows[rows.length - 1]);
    }
  } finally {
    for (const a of Object.values(apps)) rmSync(a.dir, { recursive: true, force: true });
  }
  const text = [
    '| request | off, µs CPU/request | control (a second off app) | on | on vs off | rounds off / control / on |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    `Last run: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; in process (light-my-request into app.callback()), medians of ${ROUNDS} rounds x ${N} requests per app, ${C} in flight; ${cpus().length} cores, load average ${before.toFixed(2)} before and ${loadavg()[0].toFixed(2)} after.`,
  ].join('\n');
  console.log(text);
  if (process.argv.includes('--write')) {
    editBenchmarks((md) => replaceBetween(md, '<!-- limits-inprocess:start -->', '<!-- limits-inprocess:end -->', text));
    console.log('bench: updated the in-process limits section of BENCHMARKS.md');
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
