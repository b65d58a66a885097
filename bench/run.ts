/**
 * `npm run bench -- [scenario...] [--write]` (the npm script builds first; this file only
 * checks that dist/src/main.js exists). Each scenario starts the service and the bare-Koa
 * baseline as child processes, warms both up, then measures them alternately in the same
 * run (baseline, target, baseline, target, ...) and reports each side's mean requests/s,
 * p99 latency and the ratio target/baseline. With --write the scenario's row in
 * BENCHMARKS.md is replaced (rows are keyed by scenario name; other rows are kept).
 *
 * Environment: BENCH_ROUNDS (2), BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (2),
 * BENCH_CONNECTIONS (50), BENCH_PIPELINING (1); BENCH_TARGET_CMD runs that command as the
 * target instead of the service (see bench/lib/server.ts); BENCH_TOKEN gives the bearer
 * token instead of reading the demo token the service prints.
 */
import { existsSync } from 'node:fs';
import { combine, fmtStatuses, measure, type Load, type Measured } from './lib/autocannon';
import { envNumber as num } from './lib/env';
import { metric } from './lib/prometheus';
import { cell, editBenchmarks, environment, upsertRows } from './lib/report';
import { serviceEntry, startBaseline, startService, targetOverride, type Running } from './lib/server';

export interface Row {
  scenario: string;
  target: string;
  baseline: string;
  targetRps: number;
  baselineRps: number;
  ratio: number;
  targetP99: number;
  baselineP99: number;
  goal: string;
  /** The service's event-loop delay p99 over the measured rounds, ms (if it exposes it). */
  loopP99Ms?: number;
  notes: string;
}

export interface Scenario {
  name: string;
  run(): Promise<Row>;
}

const ROUNDS = num('BENCH_ROUNDS', 2);
const SECONDS = num('BENCH_SECONDS', 5);
const WARMUP = num('BENCH_WARMUP_SECONDS', 2);
const CONNECTIONS = num('BENCH_CONNECTIONS', 50);
const PIPELINING = num('BENCH_PIPELINING', 1);

const BASELINE = 'bare Koa 3 GET /';

export type Target = Omit<Load, 'connections' | 'duration' | 'pipelining'>;

interface Compared {
  t: Measured;
  b: Measured;
}

/** Warm up both sides, then alternate baseline and target rounds; mean req/s, worst p99. */
async function alternate(baseline: Target, target: Target): Promise<Compared> {
  const settings = { connections: CONNECTIONS, pipelining: PIPELINING };
  await measure({ ...baseline, ...settings, duration: WARMUP });
  await measure({ ...target, ...settings, duration: WARMUP });
  const bs: Measured[] = [];
  const ts: Measured[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    bs.push(await measure({ ...baseline, ...settings, duration: SECONDS }));
    ts.push(await measure({ ...target, ...settings, duration: SECONDS }));
    const [b, t] = [bs[i], ts[i]];
    console.error(
      `  round ${i + 1}/${ROUNDS}: baseline ${Math.round(b.requestsPerSec)} req/s p99 ${b.latencyP99} ms | ` +
        `target ${Math.round(t.requestsPerSec)} req/s p99 ${t.latencyP99} ms, statuses ${fmtStatuses(t.statuses)}, errors ${t.errors}`,
    );
  }
  return { t: combine(ts), b: combine(bs) };
}

/** Starts service (with `env`) and baseline, runs `fn`, stops both. */
async function withServers<T>(env: Record<string, string>, fn: (svc: Running, base: Running) => Promise<T>, baseline?: [script: string, readyPath: string]): Promise<T> {
  const [svc, base] = await Promise.allSettled([startService(env), startBaseline(...(baseline ?? []))]);
  if (svc.status === 'rejected' || base.status === 'rejected') {
    await Promise.all([svc, base].map((s) => (s.status === 'fulfilled' ? s.value.stop() : Promise.resolve())));
    throw svc.status === 'rejected' ? svc.reason : (base as PromiseRejectedResult).reason;
  }
  try {
    return await fn(svc.value, base.value);
  } finally {
    await Promise.all([svc.value.stop(), base.value.stop()]);
  }
}

/** Event-loop delay p99 of the service (prom-client resets the histogram on each scrape). */
async function loopP99(svc: Running): Promise<number | undefined> {
  try {
    const res = await fetch(`${svc.metricsUrl}/metrics`, { signal: AbortSignal.timeout(5000) });
    const v = metric(await res.text(), 'nodejs_eventloop_lag_p99_seconds');
    return v === undefined || Number.isNaN(v) ? undefined : Math.round(v * 100_000) / 100;
  } catch {
    return undefined;
  }
}

async function tokenOf(svc: Running): Promise<string> {
  if (process.env.BENCH_TOKEN) return process.env.BENCH_TOKEN;
  const line = await svc.waitForOutput(/demo token/);
  return line.trim().split(' ').pop()!;
}

/** The common shape: scrape (reset) loop delay, alternate, scrape again, build the row. */
async function compare(svc: Running, base: Running, target: Target, row: { scenario: string; target: string; goal: string; notes?: (t: Measured) => string; baseline?: { load: Target; label: string } }): Promise<Row> {
  await loopP99(svc);
  const { t, b } = await alternate(row.baseline?.load ?? { url: `${base.url}/` }, target);
  const loop = await loopP99(svc);
  return {
    scenario: row.scenario,
    target: targetOverride ? `[BENCH_TARGET_CMD=${targetOverride}] ${row.target}` : row.target,
    baseline: row.baseline?.label ?? BASELINE,
    targetRps: t.requestsPerSec,
    baselineRps: b.requestsPerSec,
    ratio: t.requestsPerSec / b.requestsPerSec,
    targetP99: t.latencyP99,
    baselineP99: b.latencyP99,
    goal: row.goal,
    loopP99Ms: loop,
    notes: [`statuses ${fmtStatuses(t.statuses)}`, t.errors ? `errors ${t.errors}` : '', `baseline p99 ${b.latencyP99} ms`].filter(Boolean).join('; ') + (row.notes ? `; ${row.notes(t)}` : ''),
  };
}

/** The get200 request: GET /orders/1 of the demo account (auth, negotiation, ETag). */
export const orderGet = (url: string, token: string): Target => ({ url: `${url}/orders/1`, headers: { authorization: `Bearer ${token}` } });

/** PATCH /orders/1, a new note each time. If-Match: * always matches, so every request is a committed write (revision + event row). */
export function orderPatch(url: string, token: string): Target {
  let n = 0;
  return {
    url: `${url}/orders/1`,
    method: 'PATCH',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json', 'if-match': '*' },
    body: () => JSON.stringify({ note: `bench ${n++}` }),
  };
}

function patchScenario(name: string, env: Record<string, string>, target: string, goal: string): Scenario {
  return {
    name,
    run: () => withServers(env, async (svc, base) => compare(svc, base, orderPatch(svc.url, await tokenOf(svc)), { scenario: name, target, goal })),
  };
}

const GQL_SIMPLE = '{ user(id: "u1") { id name friends(first: 4) { id name } } }';
const GQL_OVER_COST = '{ user(id: "u1") { friends { friends { friends { name } } } } }'; // 3222 > 1000

const graphqlLoad = (url: string, query: string, headers: Record<string, string> = {}): Target => ({
  url: `${url}/graphql`,
  method: 'POST',
  headers: { ...headers, 'content-type': 'application/json', accept: 'application/graphql-response+json' },
  body: JSON.stringify({ query }),
});

function graphqlScenario(name: string, env: Record<string, string>, target: string): Scenario {
  return {
    name,
    run: () =>
      withServers(
        env,
        async (svc, base) => {
          const auth = { authorization: `Bearer ${await tokenOf(svc)}` };
          return compare(svc, base, graphqlLoad(svc.url, GQL_SIMPLE, auth), {
            scenario: name,
            target,
            goal: '>= 0.80',
            baseline: { load: graphqlLoad(base.url, GQL_SIMPLE), label: 'bare graphql-http, same schema/resolvers/data, default rules only' },
          });
        },
        ['graphql-bare.ts', '/healthz'],
      ),
  };
}

export const scenarios: Scenario[] = [
  {
    name: 'healthz',
    run: () => withServers({}, (svc, base) => compare(svc, base, { url: `${svc.url}/healthz` }, { scenario: 'healthz', target: 'GET /healthz', goal: 'reference (framework + middleware cost)' })),
  },
  {
    name: 'get200',
    run: () => withServers({}, async (svc, base) => compare(svc, base, orderGet(svc.url, await tokenOf(svc)), { scenario: 'get200', target: 'GET /orders/1 (200, auth, negotiation, ETag)', goal: '>= 0.60' })),
  },
  {
    name: 'get304',
    run: () =>
      withServers({}, async (svc, base) => {
        const auth = { authorization: `Bearer ${await tokenOf(svc)}` };
        const etag = (await fetch(`${svc.url}/orders/1`, { headers: auth })).headers.get('etag');
        if (!etag) throw new Error('GET /orders/1 sent no ETag');
        return compare(svc, base, { url: `${svc.url}/orders/1`, headers: { ...auth, 'if-none-match': etag } }, { scenario: 'get304', target: 'GET /orders/1 with If-None-Match (304)', goal: '>= 0.70' });
      }),
  },
  graphqlScenario('graphql', {}, 'POST /graphql simple query (auth, APQ step, document cache, depth+cost+first rules)'),
  graphqlScenario('graphql-nocache', { GRAPHQL_DOCUMENT_CACHE_SIZE: '0' }, 'POST /graphql as above, document cache off (parse + all rules every request)'),
  {
    name: 'graphql-reject',
    run: () =>
      withServers({}, async (svc, base) => {
        const auth = { authorization: `Bearer ${await tokenOf(svc)}` };
        // Both sides on the service: req/s of the rejection over req/s of the accepted simple query.
        // Rejecting costs <= 50% of executing  <=>  ratio >= 2.
        return compare(svc, base, graphqlLoad(svc.url, GQL_OVER_COST, auth), {
          scenario: 'graphql-reject',
          target: 'POST /graphql over-cost query (3222, rejected with 400)',
          goal: '>= 2.00 (rejecting costs <= 50% of executing)',
          baseline: { load: graphqlLoad(svc.url, GQL_SIMPLE, auth), label: 'the same service, accepted simple query' },
        });
      }),
  },
  patchScenario('patch', {}, 'PATCH /orders/1 (If-Match: *, transaction + event row, SQLITE_SYNCHRONOUS=normal)', '>= 0.30'),
  patchScenario('patch-full', { SQLITE_SYNCHRONOUS: 'full' }, 'PATCH as above with SQLITE_SYNCHRONOUS=full (fsync per commit)', 'n/a (durability option)'),
];

// ---- output ---------------------------------------------------------------------------------

export const HEADER = ['| scenario | target | baseline | target req/s | baseline req/s | ratio | target p99 ms | goal | loop p99 ms | notes |', '|---|---|---|---|---|---|---|---|---|---|'];

const fmt = (n: number) => (n >= 100 ? Math.round(n).toString() : n.toFixed(2));

export const line = (r: Row) =>
  `| ${r.scenario} | ${cell(r.target)} | ${r.baseline} | ${fmt(r.targetRps)} | ${fmt(r.baselineRps)} | ${r.ratio.toFixed(2)} | ${fmt(r.targetP99)} | ${cell(r.goal)} | ${r.loopP99Ms ?? 'n/a'} | ${cell(r.notes)} |`;

/** Replaces (or adds, before `<!-- rows -->`) each row's line in BENCHMARKS.md, keyed by scenario. */
function writeRows(rows: Row[], env: string): void {
  editBenchmarks((text) =>
    upsertRows(
      text,
      rows.map((r) => ({ scenario: r.scenario, line: line(r) })),
      '<!-- rows -->',
    ).replace(/^Last run: .*$/m, () => `Last run: ${env} (scenarios: ${rows.map((r) => r.scenario).join(', ')}).`),
  );
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const unknownFlags = args.filter((a) => a.startsWith('--') && a !== '--write');
  if (unknownFlags.length) throw new Error(`unknown option ${unknownFlags.join(' ')}; usage: bench/run.ts [scenario...] [--write]`);
  const names = args.filter((a) => !a.startsWith('--'));
  const known = scenarios.map((s) => s.name);
  for (const n of names) if (!known.includes(n)) throw new Error(`unknown scenario ${n}; known: ${known.join(', ')}`);
  if (!targetOverride && !existsSync(serviceEntry)) {
    console.error('bench: dist/src/main.js is missing: run npm run build first');
    process.exit(1);
  }
  const selected = names.length ? scenarios.filter((s) => names.includes(s.name)) : scenarios;

  const env = environment();
  console.log(`bench: ${env}; ${CONNECTIONS} connections, pipelining ${PIPELINING}, warm-up ${WARMUP} s, ${ROUNDS} x ${SECONDS} s alternating rounds`);
  if (targetOverride) console.log(`bench: target is BENCH_TARGET_CMD=${targetOverride}`);
  console.log(HEADER.join('\n'));
  const rows: Row[] = [];
  for (const s of selected) {
    console.error(`${s.name}:`);
    const row = await s.run();
    rows.push(row);
    console.log(line(row));
  }
  if (args.includes('--write')) {
    writeRows(rows, env);
    console.log(`bench: updated ${rows.length} row(s) in BENCHMARKS.md`);
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
