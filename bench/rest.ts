/**
 * `npm run bench:rest [-- --write]`: the REST tier against hand-written peers, all in
 * one run. Starts the service (compiled, fresh DATA_DIR) and three peers from
 * bench/baseline/ as separate processes: bare Koa hello-world (koa-hello.ts), the order
 * resource hand-written on Koa (koa-orders.ts) and on Fastify (fastify-orders.ts). The
 * load generator is wrk (Debian's `wrk`, its own process; installed with apt-get if
 * missing). After a warm-up of every target, rounds alternate over the targets (the
 * order rotates each round) and each side's mean req/s is compared.
 *
 * Scenarios: get200 (GET /orders/1, 200), get304 (the same with If-None-Match: the
 * target's own ETag), patch (PATCH /orders/1 merge patch; service: If-Match *, a
 * durable write with its event row; peers: one UPDATE).
 *
 * Environment: BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (2),
 * BENCH_CONNECTIONS (50). With --write the "REST against hand-written peers" section of
 * BENCHMARKS.md is replaced.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { request } from 'node:http';
import { join } from 'node:path';
import { envNumber as num } from './lib/env';
import { editBenchmarks, replaceBetween } from './lib/report';
import { startBaseline, startService, type Running } from './lib/server';
import { PEER_TOKEN } from './baseline/peer-data';

const ROUNDS = num('BENCH_ROUNDS', 3);
const SECONDS = num('BENCH_SECONDS', 5);
const WARMUP = num('BENCH_WARMUP_SECONDS', 2);
const CONNECTIONS = num('BENCH_CONNECTIONS', 50);

interface Load {
  url: string;
  headers: Record<string, string>;
  /** wrk Lua script (PATCH bodies). */
  script?: string;
}
interface Result {
  rps: number;
  p99: number;
  non2xx3xx: number;
  errors: number;
}

function ensureWrk(): void {
  if (spawnSync('wrk', ['--version']).error === undefined) return;
  console.error('bench: wrk is missing; installing Debian package wrk');
  execFileSync('apt-get', ['install', '-y', 'wrk'], { stdio: 'inherit' });
}

const ms = (v: string, unit: string) => Number(v) * ({ us: 0.001, ms: 1, s: 1000 } as Record<string, number>)[unit];

function wrk(load: Load, seconds: number): Result {
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency'];
  for (const [k, v] of Object.entries(load.headers)) args.push('-H', `${k}: ${v}`);
  if (load.script) args.push('-s', load.script);
  args.push(load.url);
  const out = execFileSync('wrk', args, { encoding: 'utf8' });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const p = /^\s+99%\s+([\d.]+)(us|ms|s)\s*$/m.exec(out);
  const non = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  if (!Number.isFinite(rps)) throw new Error(`cannot read wrk output:\n${out}`);
  return { rps, p99: p ? ms(p[1], p[2]) : NaN, non2xx3xx: non, errors: sock ? sock.slice(1).reduce((s, x) => s + Number(x), 0) : 0 };
}

/**
 * One request, to check the status (and read the ETag) before measuring. node:http, not
 * fetch: fetch adds `Cache-Control: no-cache` to conditional requests, and then
 * koa-conditional-get (rightly) refuses the 304 that wrk, sending no such header, gets.
 */
function probe(load: Load, method = 'GET', body?: string): Promise<{ status: number; etag: string | null }> {
  return new Promise((resolve, reject) => {
    const req = request(load.url, { method, headers: load.headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, etag: res.headers.etag ?? null }));
    });
    req.on('error', (err) => reject(new Error(`${method} ${load.url}: ${err.message}`)));
    req.end(body);
  });
}

function patchScript(dir: string, ifMatch: boolean): string {
  const file = join(dir, ifMatch ? 'patch-if-match.lua' : 'patch.lua');
  writeFileSync(
    file,
    [
      'wrk.method = "PATCH"',
      'wrk.headers["Content-Type"] = "application/merge-patch+json"',
      ...(ifMatch ? ['wrk.headers["If-Match"] = "*"'] : []),
      'local n = 0',
      'request = function()',
      '  n = n + 1',
      '  return wrk.format(nil, nil, nil, \'{"note":"bench \' .. n .. \'"}\')',
      'end',
      '',
    ].join('\n'),
  );
  return file;
}

interface Side {
  name: string;
  load: Load;
}
interface Measured {
  name: string;
  rps: number;
  p99: number;
  bad: number;
}

/** Warm every side up, then ROUNDS rounds over all sides, rotating the order each round. */
function alternate(sides: Side[]): Measured[] {
  for (const s of sides) wrk(s.load, WARMUP);
  const runs = new Map<string, Result[]>(sides.map((s) => [s.name, []]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = sides.map((_, i) => sides[(i + r) % sides.length]);
    const line: string[] = [];
    for (const s of order) {
      const res = wrk(s.load, SECONDS);
      runs.get(s.name)!.push(res);
      line.push(`${s.name} ${Math.round(res.rps)}`);
    }
    console.error(`  round ${r + 1}/${ROUNDS}: ${line.join(' | ')}`);
  }
  return sides.map((s) => {
    const rs = runs.get(s.name)!;
    return {
      name: s.name,
      rps: rs.reduce((a, x) => a + x.rps, 0) / rs.length,
      p99: Math.max(...rs.map((x) => x.p99)),
      bad: rs.reduce((a, x) => a + x.non2xx3xx + x.errors, 0),
    };
  });
}

interface Row {
  scenario: string;
  request: string;
  service: Measured;
  peers: Measured[];
  goal: string;
}

const fmt = (n: number) => Math.round(n).toString();

function table(rows: Row[]): string {
  const out = [
    '| scenario | request | service req/s (p99 ms) | bare Koa hello req/s | Koa peer req/s | Fastify peer req/s | vs hello | vs Koa peer | vs Fastify peer | goal | non-2xx/3xx or socket errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const peer = (n: string) => r.peers.find((p) => p.name === n);
    const cell = (n: string) => (peer(n) ? `${fmt(peer(n)!.rps)} (${peer(n)!.p99.toFixed(1)})` : 'n/a');
    const ratio = (n: string) => (peer(n) ? (r.service.rps / peer(n)!.rps).toFixed(2) : 'n/a');
    const bad = [r.service, ...r.peers].map((m) => `${m.name} ${m.bad}`).join(', ');
    out.push(
      `| ${r.scenario} | ${r.request} | ${fmt(r.service.rps)} (${r.service.p99.toFixed(1)}) | ${cell('hello')} | ${cell('koa')} | ${cell('fastify')} | ${ratio('hello')} | ${ratio('koa')} | ${ratio('fastify')} | ${r.goal} | ${bad} |`,
    );
  }
  return out.join('\n');
}

async function main(): Promise<void> {
  ensureWrk();
  const dir = mkdtempSync(join(tmpdir(), 'orderline-bench-rest-'));
  const started: Running[] = [];
  const loadBefore = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  try {
    const [svc, hello, koa, fastify] = await Promise.all([startService(), startBaseline('koa-hello.ts', '/'), startBaseline('koa-orders.ts', '/healthz'), startBaseline('fastify-orders.ts', '/healthz')]);
    started.push(svc, hello, koa, fastify);
    const token = (await svc.waitForOutput(/demo token/)).trim().split(' ').pop()!;
    const auth = (t: string) => ({ Authorization: `Bearer ${t}` });
    const get = {
      service: { url: `${svc.url}/orders/1`, headers: auth(token) },
      koa: { url: `${koa.url}/orders/1`, headers: auth(PEER_TOKEN) },
      fastify: { url: `${fastify.url}/orders/1`, headers: auth(PEER_TOKEN) },
    };
    const hello200 = { url: `${hello.url}/`, headers: {} };
    for (const [name, load] of Object.entries({ ...get, hello: hello200 })) {
      const p = await probe(load);
      if (p.status !== 200) throw new Error(`${name}: GET answered ${p.status}`);
    }
    const rows: Row[] = [];
    const byName = (ms: Measured[], n: string) => ms.find((m) => m.name === n)!;

    console.error('get200:');
    const g = alternate([
      { name: 'hello', load: hello200 },
      { name: 'koa', load: get.koa },
      { name: 'fastify', load: get.fastify },
      { name: 'service', load: get.service },
    ]);
    rows.push({
      scenario: 'rest-get200',
      request: 'GET /orders/1 (bearer, one row, JSON with _links)',
      service: byName(g, 'service'),
      peers: g.filter((m) => m.name !== 'service'),
      goal: '>= 1.00 Koa and Fastify peers, >= 0.75 hello',
    });

    console.error('get304:');
    const inm = async (load: Load): Promise<Load> => {
      const { etag } = await probe(load);
      if (!etag) throw new Error(`${load.url}: no ETag`);
      const conditional = { ...load, headers: { ...load.headers, 'If-None-Match': etag } };
      const p = await probe(conditional);
      if (p.status !== 304) throw new Error(`${load.url}: If-None-Match answered ${p.status}`);
      return conditional;
    };
    const c = alternate([
      { name: 'koa', load: await inm(get.koa) },
      { name: 'fastify', load: await inm(get.fastify) },
      { name: 'service', load: await inm(get.service) },
    ]);
    rows.push({ scenario: 'rest-get304', request: 'GET /orders/1 with If-None-Match: its ETag (304)', service: byName(c, 'service'), peers: c.filter((m) => m.name !== 'service'), goal: '>= 1.00 Koa and Fastify peers' });

    console.error('patch:');
    const patchBody = '{"note":"probe"}';
    const patchHeaders = { 'Content-Type': 'application/merge-patch+json', 'If-Match': '*' };
    for (const [name, load] of Object.entries(get)) {
      const p = await probe({ ...load, headers: { ...load.headers, ...patchHeaders } }, 'PATCH', patchBody);
      if (p.status !== 200) throw new Error(`${name}: PATCH answered ${p.status}`);
    }
    const p = alternate([
      { name: 'koa', load: { ...get.koa, script: patchScript(dir, false) } },
      { name: 'fastify', load: { ...get.fastify, script: patchScript(dir, false) } },
      { name: 'service', load: { ...get.service, script: patchScript(dir, true) } },
    ]);
    rows.push({
      scenario: 'rest-patch',
      request: 'PATCH /orders/1 merge patch (service: If-Match *, transaction + event row, synchronous=NORMAL; peers: one UPDATE ... RETURNING)',
      service: byName(p, 'service'),
      peers: p.filter((m) => m.name !== 'service'),
      goal: 'recorded',
    });

    const loadAfter = loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
    const cpu = cpus();
    const env =
      `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores, Node ${process.version}; ` +
      `wrk -t1 -c${CONNECTIONS}, warm-up ${WARMUP} s per target, ${ROUNDS} x ${SECONDS} s rounds alternating over the targets; ` +
      `load average before ${loadBefore}, after ${loadAfter}`;
    const text = `${table(rows)}\n\nLast run: ${env}.`;
    console.log(text);
    if (process.argv.includes('--write')) {
      editBenchmarks((md) => replaceBetween(md, '<!-- rest-peers:start -->', '<!-- rest-peers:end -->', text));
      console.log('bench: updated the REST peers section of BENCHMARKS.md');
    }
  } finally {
    await Promise.all(started.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
