/**
 * `npm run bench [scenario...] [-- --write]`: each scenario measures the service and
 * the bare-Koa baseline in the same run, alternating rounds, and reports the ratio.
 * With --write the rows of BENCHMARKS.md are replaced by this run's figures.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { measure, metric, root, startBaseline, startService, type Load, type Measured, type Running } from './lib';

interface Row {
  scenario: string;
  target: string;
  targetRps: number;
  baselineRps: number;
  ratio: number;
  p99: number;
  loopP99Ms?: number;
  goal: string;
  notes: string;
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

const tokenOf = (svc: Running) => {
  const line = svc.output.find((l) => l.includes('demo token'));
  if (!line) throw new Error('the service printed no demo token');
  return line.trim().split(' ').pop()!;
};

/** Alternates baseline and target rounds; returns the mean of each side. */
async function sideBySide(baseline: () => Load, target: () => Load): Promise<{ t: Measured; b: Measured }> {
  const ts: Measured[] = [];
  const bs: Measured[] = [];
  await measure({ ...baseline(), seconds: 1 }); // warm-up
  await measure({ ...target(), seconds: 1 });
  for (let i = 0; i < ROUNDS; i++) {
    bs.push(await measure({ connections: CONNECTIONS, seconds: SECONDS, ...baseline() }));
    ts.push(await measure({ connections: CONNECTIONS, seconds: SECONDS, ...target() }));
  }
  const mean = (ms: Measured[]): Measured => ({
    rps: ms.reduce((s, m) => s + m.rps, 0) / ms.length,
    p50: ms.reduce((s, m) => s + m.p50, 0) / ms.length,
    p99: Math.max(...ms.map((m) => m.p99)),
    non2xx: ms.reduce((s, m) => s + m.non2xx, 0),
    errors: ms.reduce((s, m) => s + m.errors, 0),
    statuses: Object.assign({}, ...ms.map((m) => m.statuses)),
  });
  return { t: mean(ts), b: mean(bs) };
}

/** Event-loop delay p99 of the service during the measured rounds (prom-client resets it per scrape). */
async function loopP99(svc: Running): Promise<number | undefined> {
  const v = metric(await (await fetch(`${svc.url}/metrics`)).text(), 'nodejs_eventloop_lag_p99_seconds');
  return v === undefined ? undefined : Math.round(v * 1000 * 100) / 100;
}

type Scenario = (svc: Running, base: Running) => Promise<Row>;

const scenarios: Record<string, Scenario> = {
  async healthz(svc, base) {
    await loopP99(svc);
    const { t, b } = await sideBySide(() => ({ url: `${base.url}/` }), () => ({ url: `${svc.url}/healthz` }));
    return { scenario: 'healthz', target: 'GET /healthz', targetRps: t.rps, baselineRps: b.rps, ratio: t.rps / b.rps, p99: t.p99, loopP99Ms: await loopP99(svc), goal: 'baseline row', notes: `non-2xx ${t.non2xx}` };
  },
  async get200(svc, base) {
    const auth = { authorization: `Bearer ${tokenOf(svc)}` };
    await loopP99(svc);
    const { t, b } = await sideBySide(() => ({ url: `${base.url}/` }), () => ({ url: `${svc.url}/orders/1`, headers: auth }));
    return { scenario: 'get200', target: 'GET /orders/1 (200, auth, negotiation, ETag)', targetRps: t.rps, baselineRps: b.rps, ratio: t.rps / b.rps, p99: t.p99, loopP99Ms: await loopP99(svc), goal: '>= 0.60', notes: `non-2xx ${t.non2xx}` };
  },
  async get304(svc, base) {
    const auth = { authorization: `Bearer ${tokenOf(svc)}` };
    const etag = (await fetch(`${svc.url}/orders/1`, { headers: auth })).headers.get('etag')!;
    await loopP99(svc);
    const { t, b } = await sideBySide(() => ({ url: `${base.url}/` }), () => ({ url: `${svc.url}/orders/1`, headers: { ...auth, 'if-none-match': etag } }));
    const ok = Object.keys(t.statuses).join(',');
    return { scenario: 'get304', target: 'GET /orders/1 with If-None-Match (304)', targetRps: t.rps, baselineRps: b.rps, ratio: t.rps / b.rps, p99: t.p99, loopP99Ms: await loopP99(svc), goal: '>= 0.70', notes: `statuses ${ok}` };
  },
  async 'patch-full'(svc, base) {
    const row = await scenarios.patch(svc, base);
    return { ...row, scenario: 'patch-full', target: 'PATCH as above with SQLITE_SYNCHRONOUS=full (fsync per commit)', goal: 'n/a (durability option)' };
  },
  async patch(svc, base) {
    const auth = { authorization: `Bearer ${tokenOf(svc)}` };
    let n = 0;
    await loopP99(svc);
    // If-Match: * always matches, so every request is a committed write (revision + event row).
    const { t, b } = await sideBySide(
      () => ({ url: `${base.url}/` }),
      () => ({
        url: `${svc.url}/orders/1`,
        method: 'PATCH',
        headers: { ...auth, 'content-type': 'application/merge-patch+json', 'if-match': '*' },
        body: () => JSON.stringify({ note: `bench ${n++}` }),
      }),
    );
    return { scenario: 'patch', target: 'PATCH /orders/1 (If-Match: *, transaction + event row, SQLITE_SYNCHRONOUS=normal)', targetRps: t.rps, baselineRps: b.rps, ratio: t.rps / b.rps, p99: t.p99, loopP99Ms: await loopP99(svc), goal: '>= 0.30', notes: `statuses ${Object.keys(t.statuses).join(',')}` };
  },
};

const fmt = (n: number) => (n >= 100 ? Math.round(n).toString() : n.toFixed(2));
const line = (r: Row) =>
  `| ${r.scenario} | ${r.target} | ${fmt(r.targetRps)} | ${fmt(r.baselineRps)} | ${r.ratio.toFixed(2)} | ${fmt(r.p99)} | ${r.loopP99Ms ?? 'n/a'} | ${r.goal} | ${r.notes} |`;

function writeRows(rows: Row[]): void {
  const file = join(root, 'BENCHMARKS.md');
  let text = readFileSync(file, 'utf8');
  for (const r of rows) {
    const re = new RegExp(`^\\| ${r.scenario} \\|.*$`, 'm');
    text = re.test(text) ? text.replace(re, line(r)) : text.replace(/<!-- rows -->/, `${line(r)}\n<!-- rows -->`);
  }
  text = text.replace(/^Last run: .*$/m, `Last run: ${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'unknown CPU'} x ${cpus().length}, Node ${process.version}.`);
  writeFileSync(file, text);
}

async function main(): Promise<void> {
  if (!existsSync(join(root, 'dist/src/main.js'))) throw new Error('dist/src/main.js is missing: run `npm run build` first (npm run bench does)');
  const names = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const selected = names.length ? names : Object.keys(scenarios);
  for (const n of selected) if (!scenarios[n]) throw new Error(`unknown scenario ${n}; known: ${Object.keys(scenarios).join(', ')}`);
  const rows: Row[] = [];
  for (const n of selected) {
    const env: Record<string, string> = n === 'patch-full' ? { SQLITE_SYNCHRONOUS: 'full' } : {};
    const [svc, base] = await Promise.all([startService(env), startBaseline()]);
    try {
      const row = await scenarios[n](svc, base);
      rows.push(row);
      console.log(line(row));
    } finally {
      await Promise.all([svc.stop(), base.stop()]);
    }
  }
  if (process.argv.includes('--write')) writeRows(rows);
}

main().catch((err) => {
  console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
