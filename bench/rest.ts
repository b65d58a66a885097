/**
 * `npm run bench:rest [-- --store sqlite|postgres|all] [--write]`: the REST tier against
 * hand-written peers doing the same work on the same store, all in one run per store.
 *
 * Per store it starts, each as its own process: the service (compiled; SQLite on a fresh
 * DATA_DIR, or PostgreSQL with DATABASE_URL, a fresh DATABASE_SCHEMA and DEMO=1), the
 * order resource hand-written on Fastify 5 and on Koa 3 (bench/baseline/fastify-peer.ts,
 * koa-peer.ts over peer-data.ts's SQLite file or peer-pg.ts's own schema in the same
 * PostgreSQL database), and bare Koa hello-world as a reference for the GET. The load
 * generator is wrk (Debian's `wrk`, installed with apt-get if missing). Every scenario is
 * first checked on every side (status, headers, the list's page and links equal across
 * sides), then each side is warmed up and rounds alternate over the sides (the order
 * rotates each round); a side's figure is its mean req/s and its worst p99.
 *
 * Scenarios (what each side does per request: bench/baseline/peer-data.ts and
 * src/http/rest/handlers.ts):
 * - get200: GET /orders/1 -> 200 with the revision ETag;
 * - get304: the same with If-None-Match: the side's own ETag -> 304;
 * - list:   GET /orders?limit=5 -> the first keyset page of 5 with _links.self and .next;
 * - create: POST /orders (JSON) -> order + order.created event in one transaction, 201
 *           with Location and ETag;
 * - patch:  PATCH /orders/1 merge patch with a new note each request and If-Match: *
 *           (matches any revision, so every request is a real write on every side) ->
 *           If-Match check, revision bump, order.updated event, one transaction.
 * All sides authenticate a bearer token on every request, each through an in-memory map
 * keyed by the token as sent (the service's auth cache; the peers' map), hashing it
 * (SHA-256) only on a miss, to look up its stored hash.
 *
 * Environment: BENCH_STORE (sqlite; or postgres, all), BENCH_DATABASE_URL
 * (postgres://postgres@127.0.0.1:5432/test), BENCH_ROUNDS (3), BENCH_SECONDS (5),
 * BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (50). With --write each measured store's
 * table replaces its part of the "REST against hand-written peers" section of BENCHMARKS.md.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { request } from 'node:http';
import { join } from 'node:path';
import { Client } from 'pg';
import { envNumber as num } from './lib/env';
import { editBenchmarks, replaceBetween } from './lib/report';
import { startBaseline, startService, type Running } from './lib/server';
import { PEER_TOKEN } from './baseline/peer-data';

const ROUNDS = num('BENCH_ROUNDS', 3);
const SECONDS = num('BENCH_SECONDS', 5);
const WARMUP = num('BENCH_WARMUP_SECONDS', 2);
const CONNECTIONS = num('BENCH_CONNECTIONS', 50);
const DATABASE_URL = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

export type StoreKind = 'sqlite' | 'postgres';
const STORE_NAMES: Record<StoreKind, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
export const REST_MARKERS = { start: '<!-- rest-peers:start -->', end: '<!-- rest-peers:end -->' };
export const storeMarkers = (store: StoreKind) => ({ start: `<!-- rest-peers-${store}:start -->`, end: `<!-- rest-peers-${store}:end -->` });

/** The stores to measure: `--store X` / `--store=X`, else BENCH_STORE, else sqlite; `all` (or `sqlite,postgres`) is both. */
export function storesOf(argv: string[], env: string | undefined): StoreKind[] {
  const i = argv.findIndex((a) => a === '--store' || a.startsWith('--store='));
  const raw = i < 0 ? env || 'sqlite' : argv[i].startsWith('--store=') ? argv[i].slice('--store='.length) : (argv[i + 1] ?? '');
  const names =
    raw === 'all'
      ? ['sqlite', 'postgres']
      : raw
          .split(',')
          .map((s) => s.trim().toLowerCase())
          .map((s) => (s === 'pg' ? 'postgres' : s));
  const bad = names.filter((n) => n !== 'sqlite' && n !== 'postgres');
  if (bad.length > 0 || names.length === 0) throw new Error(`--store / BENCH_STORE must be sqlite, postgres or all, got "${raw}"`);
  return [...new Set(names)] as StoreKind[];
}

/**
 * The REST part of BENCHMARKS.md with `body` as `store`'s table: between that store's
 * markers, which live inside the rest-peers markers; a part without them (an older
 * layout) is first laid out anew with one marked part per store.
 */
export function writeStorePart(md: string, store: StoreKind, body: string): string {
  const m = storeMarkers(store);
  if (!md.includes(m.start) || !md.includes(m.end)) {
    const parts = (['sqlite', 'postgres'] as const).map((s) => `${storeMarkers(s).start}\n### ${STORE_NAMES[s]}\n\nNot measured yet.\n${storeMarkers(s).end}`);
    md = replaceBetween(md, REST_MARKERS.start, REST_MARKERS.end, parts.join('\n'));
  }
  return replaceBetween(md, m.start, m.end, body);
}

interface Load {
  url: string;
  headers: Record<string, string>;
  /** wrk Lua script (method and body). */
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

interface Probed {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One request, to check a side's answer before measuring. node:http, not fetch: fetch
 * adds `Cache-Control: no-cache` to conditional requests, and then koa-conditional-get
 * (rightly) refuses the 304 that wrk, sending no such header, gets.
 */
function probe(url: string, headers: Record<string, string>, method = 'GET', body?: string): Promise<Probed> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', (err) => reject(new Error(`${method} ${url}: ${err.message}`)));
    req.end(body);
  });
}

const CREATE_BODY = JSON.stringify({ items: [{ sku: 'TEA-1', quantity: 2, unit_price_cents: 450 }], currency: 'EUR', note: 'bench' });

/** wrk scripts: POST with one JSON body; PATCH with `If-Match: *` and a note no request repeats (so each one writes). */
function scripts(dir: string) {
  const create = join(dir, 'create.lua');
  writeFileSync(create, ['wrk.method = "POST"', 'wrk.headers["Content-Type"] = "application/json"', `wrk.body = '${CREATE_BODY}'`, ''].join('\n'));
  const patch = join(dir, 'patch.lua');
  writeFileSync(
    patch,
    [
      'wrk.method = "PATCH"',
      'wrk.headers["Content-Type"] = "application/merge-patch+json"',
      'wrk.headers["If-Match"] = "*"',
      `local run = "${Date.now().toString(36)}"`,
      'local n = 0',
      'request = function()',
      '  n = n + 1',
      '  return wrk.format(nil, nil, nil, \'{"note":"bench \' .. run .. " " .. n .. \'"}\')',
      'end',
      '',
    ].join('\n'),
  );
  return { create, patch };
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
  sides: Measured[];
}

const fmt = (n: number) => Math.round(n).toString();

export function table(rows: Row[]): string {
  const out = [
    '| scenario | request | service req/s (p99 ms) | Fastify peer req/s (p99 ms) | Koa peer req/s (p99 ms) | service / Fastify | service / Koa | non-2xx/3xx or socket errors |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const side = (n: string) => r.sides.find((m) => m.name === n);
    const cell = (n: string) => (side(n) ? `${fmt(side(n)!.rps)} (${side(n)!.p99.toFixed(1)})` : 'n/a');
    const ratio = (n: string) => (side(n) && side('service') ? (side('service')!.rps / side(n)!.rps).toFixed(2) : 'n/a');
    const bad = r.sides.map((m) => `${m.name} ${m.bad}`).join(', ');
    out.push(`| ${r.scenario} | ${r.request} | ${cell('service')} | ${cell('fastify')} | ${cell('koa')} | ${ratio('fastify')} | ${ratio('koa')} | ${bad} |`);
  }
  return out.join('\n');
}

async function withPg<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: DATABASE_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const header = (p: Probed, name: string) => {
  const v = p.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};

/** One store: start every side, check each scenario on each side, measure; the markdown of the store's part. */
async function measureStore(store: StoreKind): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-bench-rest-'));
  const started: Running[] = [];
  const suffix = `${process.pid}_${Date.now().toString(36)}`;
  const schemas = { service: `bench_rest_svc_${suffix}`, fastify: `bench_rest_fastify_${suffix}`, koa: `bench_rest_koa_${suffix}` };
  const pg = store === 'postgres';
  const peerEnv = (schema: string): Record<string, string> => (pg ? { PEER_DATABASE_URL: DATABASE_URL, PEER_DATABASE_SCHEMA: schema } : {});
  const loadBefore = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  console.error(`bench: REST on ${STORE_NAMES[store]}`);
  try {
    if (pg) await withPg((c) => c.query('SELECT 1'));
    const launched = await Promise.allSettled([
      startService(pg ? { DATABASE_URL, DATABASE_SCHEMA: schemas.service, DEMO: '1' } : {}),
      startBaseline(pg ? 'fastify-pg-orders.ts' : 'fastify-orders.ts', '/healthz', peerEnv(schemas.fastify)),
      startBaseline(pg ? 'koa-pg-orders.ts' : 'koa-orders.ts', '/healthz', peerEnv(schemas.koa)),
      startBaseline('koa-hello.ts', '/'),
    ]);
    for (const l of launched) if (l.status === 'fulfilled') started.push(l.value);
    const failed = launched.find((l) => l.status === 'rejected');
    if (failed) throw failed.reason;
    const [svc, fastify, koa, hello] = started;
    const token = (await svc.waitForOutput(/demo token/)).trim().split(' ').pop()!;
    const sides = [
      { name: 'service', url: svc.url, auth: { Authorization: `Bearer ${token}` } },
      { name: 'fastify', url: fastify.url, auth: { Authorization: `Bearer ${PEER_TOKEN}` } },
      { name: 'koa', url: koa.url, auth: { Authorization: `Bearer ${PEER_TOKEN}` } },
    ];
    const lua = scripts(dir);
    const rows: Row[] = [];
    const expect = (name: string, what: string, p: Probed, status: number, ...headers: string[]) => {
      if (p.status !== status) throw new Error(`${name}: ${what} answered ${p.status}, not ${status}: ${p.body.slice(0, 300)}`);
      for (const h of headers) if (!header(p, h)) throw new Error(`${name}: ${what} answered without ${h}`);
    };

    console.error('get200:');
    for (const s of sides) expect(s.name, 'GET /orders/1', await probe(`${s.url}/orders/1`, s.auth), 200, 'ETag');
    expect('hello', 'GET /', await probe(`${hello.url}/`, {}), 200);
    const g = alternate([{ name: 'hello', load: { url: `${hello.url}/`, headers: {} } }, ...sides.map((s) => ({ name: s.name, load: { url: `${s.url}/orders/1`, headers: s.auth } }))]);
    rows.push({ scenario: 'rest-get200', request: 'GET /orders/1 (bearer, one order, JSON with _links, ETag)', sides: g.filter((m) => m.name !== 'hello') });
    const helloRps = g.find((m) => m.name === 'hello')!;

    console.error('get304:');
    const conditional: Side[] = [];
    for (const s of sides) {
      const etag = header(await probe(`${s.url}/orders/1`, s.auth), 'ETag')!;
      const headers = { ...s.auth, 'If-None-Match': etag };
      expect(s.name, `GET /orders/1 with If-None-Match ${etag}`, await probe(`${s.url}/orders/1`, headers), 304);
      conditional.push({ name: s.name, load: { url: `${s.url}/orders/1`, headers } });
    }
    rows.push({ scenario: 'rest-get304', request: 'GET /orders/1 with If-None-Match: its ETag (304)', sides: alternate(conditional) });

    console.error('create:');
    for (const s of sides) {
      const p = await probe(`${s.url}/orders`, { ...s.auth, 'Content-Type': 'application/json' }, 'POST', CREATE_BODY);
      expect(s.name, 'POST /orders', p, 201, 'Location', 'ETag');
    }
    rows.push({
      scenario: 'rest-create',
      request: 'POST /orders (JSON; order + event row in one transaction; 201, Location, ETag)',
      sides: alternate(sides.map((s) => ({ name: s.name, load: { url: `${s.url}/orders`, headers: s.auth, script: lua.create } }))),
    });

    console.error('list:');
    let links: string | undefined;
    for (const s of sides) {
      const p = await probe(`${s.url}/orders?limit=5`, s.auth);
      expect(s.name, 'GET /orders?limit=5', p, 200);
      const body = JSON.parse(p.body) as { orders: { id: number }[]; _links: { self: { href: string }; next?: { href: string } } };
      const shape = JSON.stringify({ ids: body.orders.map((o) => o.id), links: body._links });
      if (body.orders.length !== 5 || !body._links.next) throw new Error(`${s.name}: GET /orders?limit=5 is not a full page with _links.next: ${shape}`);
      if (links !== undefined && shape !== links) throw new Error(`${s.name}: GET /orders?limit=5 answered ${shape}, the service ${links}`);
      links ??= shape;
    }
    rows.push({
      scenario: 'rest-list',
      request: 'GET /orders?limit=5 (keyset page of 5, _links.self and _links.next with an opaque cursor)',
      sides: alternate(sides.map((s) => ({ name: s.name, load: { url: `${s.url}/orders?limit=5`, headers: s.auth } }))),
    });

    // The read again, each request for the next of 100 orders in turn: the connections ask for
    // different orders at once, as clients do, where GET /orders/1 has all of them read one.
    console.error('get200-many:');
    const many: Side[] = [];
    for (const s of sides) {
      const p = await probe(`${s.url}/orders?limit=100`, s.auth);
      expect(s.name, 'GET /orders?limit=100', p, 200);
      const ids = (JSON.parse(p.body) as { orders: { id: number }[] }).orders.map((o) => o.id);
      if (ids.length !== 100) throw new Error(`${s.name}: GET /orders?limit=100 answered ${ids.length} orders, not 100`);
      for (const id of [ids[0], ids[99]]) expect(s.name, `GET /orders/${id}`, await probe(`${s.url}/orders/${id}`, s.auth), 200, 'ETag');
      const script = join(dir, `many-${s.name}.lua`);
      writeFileSync(script, [`local ids = {${ids.join(',')}}`, 'local i = 0', 'request = function()', '  i = i % #ids + 1', '  return wrk.format(nil, "/orders/" .. ids[i])', 'end', ''].join('\n'));
      many.push({ name: s.name, load: { url: `${s.url}/orders/${ids[0]}`, headers: s.auth, script } });
    }
    rows.push({ scenario: 'rest-get200-many', request: 'GET /orders/{id} over 100 orders in turn (each connection a different order at a time)', sides: alternate(many) });

    console.error('patch:');
    for (const s of sides) {
      const headers = { ...s.auth, 'Content-Type': 'application/merge-patch+json' };
      const p = await probe(`${s.url}/orders/1`, { ...headers, 'If-Match': '*' }, 'PATCH', JSON.stringify({ note: `probe ${suffix}` }));
      expect(s.name, 'PATCH /orders/1 with If-Match *', p, 200, 'ETag');
      const stale = await probe(`${s.url}/orders/1`, { ...headers, 'If-Match': '"1-0-v2j"' }, 'PATCH', '{"note":"stale"}');
      expect(s.name, 'PATCH /orders/1 with a stale If-Match', stale, 412);
    }
    rows.push({
      scenario: 'rest-patch',
      request: 'PATCH /orders/1 merge patch, If-Match: * (If-Match check, revision bump, order + event row in one transaction)',
      sides: alternate(sides.map((s) => ({ name: s.name, load: { url: `${s.url}/orders/1`, headers: s.auth, script: lua.patch } }))),
    });

    const loadAfter = loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
    const cpu = cpus();
    const svcGet = rows[0].sides.find((m) => m.name === 'service')!;
    const storeLine = pg
      ? `PostgreSQL ${await withPg(async (c) => (await c.query<{ v: string }>("SELECT split_part(version(), ' ', 2) AS v")).rows[0].v)} on 127.0.0.1 (pool of 10 per process)`
      : 'SQLite WAL, synchronous=NORMAL';
    const env =
      `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores, Node ${process.version}, ${storeLine}; ` +
      `wrk -t1 -c${CONNECTIONS}, warm-up ${WARMUP} s per target, ${ROUNDS} x ${SECONDS} s rounds alternating over the targets; ` +
      `load average before ${loadBefore}, after ${loadAfter}`;
    return (
      `### ${STORE_NAMES[store]}\n\n${table(rows)}\n\n` +
      `Reference: bare Koa hello-world ${fmt(helloRps.rps)} req/s (p99 ${helloRps.p99.toFixed(1)} ms); the service's GET 200 is ${(svcGet.rps / helloRps.rps).toFixed(2)} of it.\n\n` +
      `Last run: ${env}.`
    );
  } finally {
    await Promise.all(started.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
    if (pg) {
      await withPg(async (c) => {
        for (const s of Object.values(schemas)) await c.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
      }).catch((err: Error) => console.error(`bench: could not drop the bench schemas: ${err.message}`));
    }
  }
}

async function main(): Promise<void> {
  const stores = storesOf(process.argv.slice(2), process.env.BENCH_STORE);
  ensureWrk();
  const parts: [StoreKind, string][] = [];
  for (const store of stores) {
    const text = await measureStore(store);
    console.log(`${text}\n`);
    parts.push([store, text]);
  }
  if (process.argv.includes('--write')) {
    editBenchmarks((md) => parts.reduce((acc, [store, text]) => writeStorePart(acc, store, text), md));
    console.log(`bench: updated the REST peers section of BENCHMARKS.md (${stores.map((s) => STORE_NAMES[s]).join(', ')})`);
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
