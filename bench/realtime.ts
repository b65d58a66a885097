/**
 * Realtime benchmarks (issue 6): `npm run --silent build && npx tsx bench/realtime.ts
 * [memory] [fanout] [slow] [--write]` (no phase named: all three). Every figure has its
 * baseline measured in the same run, side by side:
 *
 * - memory: idle memory per open connection. The service, then a bare server
 *   (bench/baseline/ws-raw.ts, bench/baseline/sse-raw.ts), each started fresh, hold
 *   BENCH_RT_CONNECTIONS idle subscribed WebSocket (SSE) connections; bytes per connection =
 *   (median VmRSS after - median VmRSS before) / connections, read from /proc/<pid>/status
 *   (heap likewise from /metrics).
 * - fanout: BENCH_RT_FANOUT_CONNECTIONS WebSocket subscribers of order:1 on the service and
 *   on the bare ws server at once; writes (service: PATCH /orders/1; bare: POST /publish of
 *   a real service message with ws's client.send() per client) closed-loop (BENCH_RT_WINDOW
 *   writes in flight, the next when one has reached every subscriber) and at a steady
 *   BENCH_RT_RATE writes/s; delivered messages/s and publish-to-delivery latency.
 * - slow: BENCH_RT_SLOW_CONNECTIONS subscribers of order:1, writes at BENCH_RT_SLOW_RATE/s,
 *   without and with one slow request in flight (a POST /orders body trickled byte by byte
 *   over the window; GraphQL queries at the cost ceiling back to back): the service's
 *   event-loop delay p99 and the publish-to-delivery p99.
 *
 * Connections are held by BENCH_RT_CLIENT_PROCS client processes (bench/lib/realtime-client.ts).
 * The fan-out machinery (withClients, fanoutCompare) is exported for bench/scaleout.ts, which
 * runs it on 1 vs 2 cluster workers; a server's CPU is that of all its processes.
 * With --write the "## Realtime" section of BENCHMARKS.md is rewritten (rows keyed by
 * scenario; rows of phases not run are kept; nothing outside the section is touched).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { metric } from './lib/prometheus';
import { mergeHist, newHist, noteOf, nowUs, quantileMs } from './lib/realtime-hist';
import type { ClientCommand, ClientStats, OpenResult } from './lib/realtime-client';
import { cpuWindow, meanShares, pidsNamed, type CpuShares } from './lib/cpu';
import { pidOfPort, rssOf } from './lib/realtime-proc';
import { root, serviceEntry, startBaseline, startService, targetOverride, type Running } from './lib/server';

const num = (name: string, def: number) => {
  const v = Number(process.env[name] ?? def);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`);
  return v;
};
const CONNECTIONS = num('BENCH_RT_CONNECTIONS', 10_000);
const PROCS = num('BENCH_RT_CLIENT_PROCS', 2);
const OPEN_CONCURRENCY = num('BENCH_RT_OPEN_CONCURRENCY', 100); // per client process
const WARM_CONNECTIONS = num('BENCH_RT_WARM_CONNECTIONS', 200);
const SETTLE_S = num('BENCH_RT_SETTLE_SECONDS', 5);
const SAMPLES = num('BENCH_RT_SAMPLES', 5);
const FANOUT_CONNECTIONS = num('BENCH_RT_FANOUT_CONNECTIONS', CONNECTIONS);
const SECONDS = num('BENCH_RT_SECONDS', 5);
const ROUNDS = num('BENCH_RT_ROUNDS', 2);
const WINDOW = num('BENCH_RT_WINDOW', 2);
const RATE = num('BENCH_RT_RATE', 2);
/** The fan-out settings, for the rows of other benches that run fanoutCompare. */
export const FANOUT = { connections: FANOUT_CONNECTIONS, seconds: SECONDS, rounds: ROUNDS, window: WINDOW, rate: RATE, clientProcs: PROCS };
const SLOW_CONNECTIONS = num('BENCH_RT_SLOW_CONNECTIONS', 1000);
const SLOW_RATE = num('BENCH_RT_SLOW_RATE', 20);
const SLOW_SECONDS = num('BENCH_RT_SLOW_SECONDS', 5);
/** The WebSocket client of the fan-out and slow phases: `lean` (raw socket, minimal frame reader) or `ws`. */
const STREAM_CLIENT = (process.env.BENCH_RT_STREAM_CLIENT ?? 'lean') as 'ws' | 'lean';
if (STREAM_CLIENT !== 'ws' && STREAM_CLIENT !== 'lean') throw new Error('BENCH_RT_STREAM_CLIENT must be lean or ws');

/** New stream connections are rate-limited by default (200/s, burst 400): lifted for the bench. */
export const SERVICE_ENV = { ACCEPT_RATE: '1000000', ACCEPT_BURST: '1000000' };
const ORDERS = 5; // demo orders 1-5 of account demo
const GQL_CEILING = '{ user(id: "u1") { posts { comments { author { name } } } } }';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const log = (s: string) => console.error(`  ${s}`);

// ---- client processes -----------------------------------------------------------------------

type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

export class Clients {
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  onDone: (t: number) => void = () => undefined;

  private constructor(readonly procs: ChildProcess[]) {
    for (const p of procs) {
      p.on('message', (m: Reply | { type: 'done'; t: number }) => {
        if ('type' in m) return this.onDone(m.t);
        const w = this.waiting.get(m.id);
        if (!w) return;
        this.waiting.delete(m.id);
        if (m.ok) w.resolve(m.result);
        else w.reject(new Error(m.error));
      });
      p.once('exit', (code) => {
        for (const w of this.waiting.values()) w.reject(new Error(`client process exited (${code})`));
        this.waiting.clear();
      });
    }
  }

  static start(n: number): Clients {
    const procs = Array.from({ length: n }, () =>
      fork(join(__dirname, 'lib/realtime-client.ts'), [], { cwd: root, execArgv: ['-r', 'tsx/cjs'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
    process.once('exit', () => procs.forEach((p) => p.kill('SIGKILL')));
    return new Clients(procs);
  }

  get pids(): number[] {
    return this.procs.map((p) => p.pid!);
  }

  call<T>(i: number, cmd: ClientCommand): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.procs[i].send({ ...cmd, id });
    });
  }

  all<T>(cmd: ClientCommand | ((i: number) => ClientCommand)): Promise<T[]> {
    return Promise.all(this.procs.map((_, i) => this.call<T>(i, typeof cmd === 'function' ? cmd(i) : cmd)));
  }

  /** `items` dealt round-robin to the processes. */
  private deal<T>(items: T[]): T[][] {
    return this.procs.map((_, i) => items.filter((_, k) => k % this.procs.length === i));
  }

  private static sum(rs: OpenResult[]): OpenResult {
    return {
      opened: rs.reduce((s, r) => s + r.opened, 0),
      failed: rs.reduce((s, r) => s + r.failed, 0),
      firstError: rs.find((r) => r.firstError)?.firstError,
      ms: Math.max(...rs.map((r) => r.ms)),
    };
  }

  async openWs(group: string, srv: Running, token: string, channels: string[], client: 'ws' | 'lean'): Promise<OpenResult> {
    const url = `${srv.url.replace(/^http/, 'ws')}/orders`;
    const parts = this.deal(channels);
    return Clients.sum(await this.all<OpenResult>((i) => ({ cmd: 'ws-open', group, url, token, channels: parts[i], concurrency: OPEN_CONCURRENCY, client })));
  }

  async openSse(group: string, srv: Running, token: string, paths: string[]): Promise<OpenResult> {
    const u = new URL(srv.url);
    const parts = this.deal(paths);
    return Clients.sum(
      await this.all<OpenResult>((i) => ({ cmd: 'sse-open', group, host: u.hostname, port: Number(u.port), token, paths: parts[i], concurrency: OPEN_CONCURRENCY })),
    );
  }

  async stats(): Promise<ClientStats & { perProc: ClientStats[] }> {
    const all = await this.all<ClientStats>({ cmd: 'stats' });
    const live: Record<string, number> = {};
    for (const s of all) for (const [k, v] of Object.entries(s.live)) live[k] = (live[k] ?? 0) + v;
    return {
      received: all.reduce((s, x) => s + x.received, 0),
      hist: all.reduce((h, x) => mergeHist(h, x.hist), newHist()),
      lastAt: Math.max(...all.map((x) => x.lastAt)),
      cpuUs: all.reduce((s, x) => s + x.cpuUs, 0),
      live,
      closedInRun: all.reduce((s, x) => s + x.closedInRun, 0),
      perProc: all,
    };
  }

  stop(): Promise<void> {
    return Promise.all(
      this.procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once('exit', () => resolve());
            p.send({ cmd: 'exit', id: 0 });
            setTimeout(() => p.kill('SIGKILL'), 3000).unref();
          }),
      ),
    ).then(() => undefined);
  }
}

/** BENCH_RT_CLIENT_PROCS client processes for `fn`; stopped after it (and the keep-alive agent closed). */
export async function withClients<T>(fn: (clients: Clients) => Promise<T>): Promise<T> {
  const clients = Clients.start(PROCS);
  try {
    return await fn(clients);
  } finally {
    await clients.stop();
    agent.destroy();
  }
}

// ---- servers ----------------------------------------------------------------------------------

async function tokenOf(srv: Running): Promise<string> {
  if (process.env.BENCH_TOKEN) return process.env.BENCH_TOKEN;
  const line = await srv.waitForOutput(/demo token/);
  return line.trim().split(' ').pop()!;
}

const portOf = (srv: Running) => Number(new URL(srv.url).port);

async function scrape(srv: Running): Promise<string> {
  const res = await fetch(`${srv.url}/metrics`, { signal: AbortSignal.timeout(10_000) });
  return res.text();
}

/** The service's event-loop delay p99 in ms since the previous scrape (prom-client resets it on scrape). */
async function loopP99(srv: Running): Promise<number | undefined> {
  const v = metric(await scrape(srv), 'nodejs_eventloop_lag_p99_seconds');
  return v === undefined || Number.isNaN(v) ? undefined : v * 1000;
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

/**
 * One HTTP request on the keep-alive agent. A reused socket the server closed while idle
 * (its keep-alive timeout) fails before the server read anything: retried once on a new one.
 */
async function call(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  try {
    return await callOnce(url, method, headers, body);
  } catch (err) {
    if ((err as { reused?: boolean }).reused && (err as NodeJS.ErrnoException).code === 'ECONNRESET') return callOnce(url, method, headers, body);
    throw err;
  }
}

function callOnce(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', (err) => reject(Object.assign(err, { reused: req.reusedSocket })));
    req.end(body);
  });
}

export type Publish = (note: string) => Promise<number>;

export const patchOrder1 = (svc: Running, token: string): Publish => async (note) =>
  (
    await call(
      `${svc.url}/orders/1`,
      'PATCH',
      { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json', 'if-match': '*' },
      JSON.stringify({ note }),
    )
  ).status;

/** The bare server broadcasts `sample` (a real service message) with its note replaced. */
const publishRaw = (base: Running, sample: string): Publish => async (note) =>
  (await call(`${base.url}/publish?channel=order:1`, 'POST', { 'content-type': 'application/json' }, sample.replace(/"note":"[^"]*"/, `"note":"${note}"`))).status;

async function withServer<T>(start: () => Promise<Running>, fn: (srv: Running) => Promise<T>): Promise<T> {
  const srv = await start();
  try {
    return await fn(srv);
  } finally {
    await srv.stop();
  }
}

const startRaw = (kind: 'ws' | 'sse') => () => startBaseline(kind === 'ws' ? 'ws-raw.ts' : 'sse-raw.ts', '/healthz');

// ---- memory -----------------------------------------------------------------------------------

interface MemSample {
  rss: number;
  heap: number;
}

interface MemResult {
  before: MemSample;
  after: MemSample;
  open: OpenResult;
  live: number;
  rssPerConn: number;
  heapPerConn: number;
}

async function sampleMemory(srv: Running, pid: number): Promise<MemSample> {
  const rss: number[] = [];
  const heap: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    if (i) await sleep(500);
    rss.push(rssOf(pid));
    heap.push(metric(await scrape(srv), 'nodejs_heap_size_used_bytes') ?? NaN);
  }
  return { rss: median(rss), heap: median(heap) };
}

async function idleMemory(clients: Clients, kind: 'ws' | 'sse', side: 'service' | 'baseline'): Promise<MemResult> {
  return withServer(side === 'service' ? () => startService(SERVICE_ENV) : startRaw(kind), async (srv) => {
    const token = side === 'service' ? await tokenOf(srv) : 'none';
    const pid = pidOfPort(portOf(srv));
    const open = (group: string, n: number) =>
      kind === 'ws'
        ? clients.openWs(group, srv, token, Array.from({ length: n }, (_, i) => `order:${(i % ORDERS) + 1}`), 'ws')
        : clients.openSse(group, srv, token, Array.from({ length: n }, (_, i) => `/api/orders/${(i % ORDERS) + 1}/stream`));
    // Warm-up: the code paths of accepting, subscribing and closing run before the "before" sample.
    const warm = await open('warm', WARM_CONNECTIONS);
    if (warm.failed) throw new Error(`${side} ${kind}: ${warm.failed} warm-up connections failed: ${warm.firstError}`);
    await clients.all({ cmd: 'close', group: 'warm' });
    await sleep(2000);
    const before = await sampleMemory(srv, pid);
    const opened = await open('idle', CONNECTIONS);
    log(`${side} ${kind}: opened ${opened.opened}/${CONNECTIONS} in ${opened.ms} ms${opened.failed ? `, ${opened.failed} failed (${opened.firstError})` : ''}`);
    await sleep(SETTLE_S * 1000);
    const after = await sampleMemory(srv, pid);
    const live = (await clients.stats()).live.idle ?? 0;
    await clients.all({ cmd: 'close', group: 'idle' });
    const n = opened.opened || 1;
    const r = { before, after, open: opened, live, rssPerConn: (after.rss - before.rss) / n, heapPerConn: (after.heap - before.heap) / n };
    log(
      `${side} ${kind}: RSS ${mb(before.rss)} -> ${mb(after.rss)} MB = ${Math.round(r.rssPerConn)} B/conn; heap ${mb(before.heap)} -> ${mb(after.heap)} MB = ${Math.round(r.heapPerConn)} B/conn; ${live} still open`,
    );
    return r;
  });
}

const mb = (b: number) => (b / 1048576).toFixed(1);
const kb = (b: number) => `${(b / 1024).toFixed(1)} KB`;

async function memoryPhase(clients: Clients): Promise<Row[]> {
  const rows: Row[] = [];
  for (const kind of ['ws', 'sse'] as const) {
    const svc = await idleMemory(clients, kind, 'service');
    const base = await idleMemory(clients, kind, 'baseline');
    const label = kind === 'ws' ? 'WebSocket /orders' : 'SSE GET /api/orders/{id}/stream';
    const fig = (m: MemResult) => `${kb(m.rssPerConn)} RSS (heap ${kb(m.heapPerConn)}) per conn`;
    rows.push({
      scenario: `${kind}-idle-memory`,
      service: `${label}: ${svc.open.opened} idle subscribed connections (orders 1-5), RSS delta / connections`,
      baseline:
        kind === 'ws'
          ? 'bare `ws` WebSocketServer (bench/baseline/ws-raw.ts), same connections and subscribe messages'
          : 'bare node:http server holding the same SSE responses (bench/baseline/sse-raw.ts)',
      serviceFig: fig(svc),
      baselineFig: fig(base),
      ratio: svc.rssPerConn / base.rssPerConn,
      goal: `<= 10 KB per connection (${svc.rssPerConn <= 10_240 ? 'met' : 'missed'})`,
      notes:
        `service RSS ${mb(svc.before.rss)} -> ${mb(svc.after.rss)} MB, heap ${mb(svc.before.heap)} -> ${mb(svc.after.heap)} MB, ` +
        `opened in ${(svc.open.ms / 1000).toFixed(1)} s${svc.open.failed ? `, ${svc.open.failed} failed` : ''}, ${svc.live} open at the end; ` +
        `baseline RSS ${mb(base.before.rss)} -> ${mb(base.after.rss)} MB, heap ${mb(base.before.heap)} -> ${mb(base.after.heap)} MB` +
        `${base.open.failed ? `, ${base.open.failed} failed` : ''}`,
    });
  }
  return rows;
}

// ---- fan-out ----------------------------------------------------------------------------------

export interface RunResult {
  sent: number;
  errors: number;
  subscribers: number;
  delivered: number;
  expected: number;
  incomplete: number;
  elapsedS: number;
  perS: number;
  writesPerS: number;
  p50: number;
  p99: number;
  max: number;
  serverCpu: number;
  clientCpu: number;
  serverUsPerMsg: number;
  closed: number;
  /** Where the machine's CPU went over the run (server = the server's processes). */
  cpu: CpuShares;
}

let runCounter = 0;

type Mode = { kind: 'steady'; rate: number } | { kind: 'max'; window: number };

/**
 * One measured run of `seconds` against `group`'s subscribers; waits for delivery to drain.
 * `pids` are the server's processes (a cluster primary and its workers).
 */
async function measureRun(clients: Clients, group: string, publish: Publish, pids: number[], mode: Mode, seconds: number): Promise<RunResult> {
  const run = ++runCounter;
  await clients.all({ cmd: 'run', group, run, track: mode.kind === 'max' });
  const perProc = (await clients.stats()).perProc.map((s) => s.live[group] ?? 0);
  const subscribers = perProc.reduce((a, b) => a + b, 0);
  const cpuEnd = cpuWindow({
    server: () => pids,
    clients: () => clients.pids,
    bench: () => [process.pid],
    postgres: () => pidsNamed(/^postgres$/),
    redis: () => pidsNamed(/^redis-server$/),
  });
  const start = nowUs();
  const end = start + seconds * 1e6;
  let sent = 0;
  let errors = 0;
  let incomplete = 0;
  const count = (p: Promise<number>) =>
    p.then(
      (s) => void (s >= 300 && errors++),
      () => void errors++,
    );

  if (mode.kind === 'steady') {
    const inflight: Promise<void>[] = [];
    const interval = 1e6 / mode.rate;
    for (let i = 0; ; i++) {
      const at = start + i * interval;
      if (at >= end) break;
      const wait = (at - nowUs()) / 1000;
      if (wait >= 1) await sleep(wait);
      sent++;
      inflight.push(count(publish(noteOf(run, nowUs()))));
    }
    await Promise.all(inflight);
  } else {
    const waiters = new Map<number, { left: number; resolve: () => void }>();
    clients.onDone = (t) => {
      const w = waiters.get(t);
      if (w && --w.left === 0) {
        waiters.delete(t);
        w.resolve();
      }
    };
    const reporting = perProc.filter((n) => n > 0).length;
    let lastT = 0;
    const one = async () => {
      let t = nowUs();
      if (t <= lastT) t = lastT + 1;
      lastT = t;
      let timer: NodeJS.Timeout | undefined;
      const done = new Promise<boolean>((resolve) => {
        waiters.set(t, { left: reporting, resolve: () => resolve(true) });
        timer = setTimeout(() => resolve(false), 10_000);
      });
      sent++;
      const status = count(publish(noteOf(run, t)));
      if (!(await done)) {
        incomplete++;
        waiters.delete(t);
      }
      clearTimeout(timer);
      await status;
    };
    await Promise.all(
      Array.from({ length: mode.window }, async () => {
        while (nowUs() < end) await one();
      }),
    );
    clients.onDone = () => undefined;
  }

  // Drain: until every subscriber has every write, or nothing arrives for 2 s.
  const expected = sent * subscribers;
  let s = await clients.stats();
  for (let last = s.received, quietSince = Date.now(); s.received < expected && Date.now() - quietSince < 2000; ) {
    await sleep(200);
    s = await clients.stats();
    if (s.received !== last) [last, quietSince] = [s.received, Date.now()];
  }
  const shares = cpuEnd();
  const wall = nowUs() - start;
  const cpu = shares.groups.server * wall;
  const elapsedS = ((s.lastAt || nowUs()) - start) / 1e6;
  return {
    sent,
    errors,
    subscribers,
    delivered: s.received,
    expected,
    incomplete,
    elapsedS,
    perS: s.received / elapsedS,
    writesPerS: sent / elapsedS,
    p50: quantileMs(s.hist, 0.5),
    p99: quantileMs(s.hist, 0.99),
    max: quantileMs(s.hist, 1),
    serverCpu: cpu / wall,
    clientCpu: s.cpuUs / wall,
    serverUsPerMsg: cpu / Math.max(1, s.received),
    closed: s.closedInRun,
    cpu: shares,
  };
}

const fmtRun = (r: RunResult) =>
  `${Math.round(r.perS)} msg/s (${r.delivered}/${r.expected}, ${r.sent} writes, ${r.writesPerS.toFixed(1)}/s${r.errors ? `, ${r.errors} failed` : ''}` +
  `${r.incomplete ? `, ${r.incomplete} incomplete` : ''}${r.closed ? `, ${r.closed} closed` : ''}), p50 ${r.p50.toFixed(1)} ms p99 ${r.p99.toFixed(1)} ms max ${r.max.toFixed(0)} ms, ` +
  `server CPU ${(r.serverCpu * 100).toFixed(0)}% (${r.serverUsPerMsg.toFixed(2)} µs/msg), clients CPU ${(r.clientCpu * 100).toFixed(0)}%`;

function combineRuns(rs: RunResult[]): RunResult {
  const sum = (f: (r: RunResult) => number) => rs.reduce((s, r) => s + f(r), 0);
  const mean = (f: (r: RunResult) => number) => sum(f) / rs.length;
  return {
    sent: sum((r) => r.sent),
    errors: sum((r) => r.errors),
    subscribers: Math.min(...rs.map((r) => r.subscribers)),
    delivered: sum((r) => r.delivered),
    expected: sum((r) => r.expected),
    incomplete: sum((r) => r.incomplete),
    elapsedS: sum((r) => r.elapsedS),
    perS: mean((r) => r.perS),
    writesPerS: mean((r) => r.writesPerS),
    p50: mean((r) => r.p50),
    p99: Math.max(...rs.map((r) => r.p99)),
    max: Math.max(...rs.map((r) => r.max)),
    serverCpu: mean((r) => r.serverCpu),
    clientCpu: mean((r) => r.clientCpu),
    serverUsPerMsg: mean((r) => r.serverUsPerMsg),
    closed: sum((r) => r.closed),
    cpu: meanShares(rs.map((r) => r.cpu)),
  };
}

/** One side of a fan-out comparison: a server with its subscribers in the client group `name`. */
export interface FanoutSide {
  /** The client group and the name in the log. */
  name: string;
  srv: Running;
  /** Bearer token for the subscribers (any string for the bare server). */
  token: string;
  /** The server's processes (CPU figures): one pid, or a cluster primary and its workers. */
  pids: number[];
  /** Called once every side's subscribers are open: how one write is published. */
  publisher: () => Promise<Publish>;
}

export interface FanoutResult {
  /** Closed loop, the rounds combined (mean msgs/s, worst p99). */
  max: RunResult;
  /** One open-loop run at BENCH_RT_RATE writes/s. */
  steady: RunResult;
}

/**
 * Fan-out side by side: BENCH_RT_FANOUT_CONNECTIONS WebSocket subscribers of order:1 on every
 * side at once (opened in the order given), a 1 s closed-loop warm-up of each, BENCH_RT_ROUNDS
 * closed-loop rounds of BENCH_RT_SECONDS alternating between the sides in that order, then one
 * steady run each; the subscribers are closed before it returns.
 */
export async function fanoutCompare(clients: Clients, sides: FanoutSide[]): Promise<Map<string, FanoutResult>> {
  const channels = Array.from({ length: FANOUT_CONNECTIONS }, () => 'order:1');
  for (const side of sides) {
    const o = await clients.openWs(side.name, side.srv, side.token, channels, STREAM_CLIENT);
    log(`fan-out ${side.name}: opened ${o.opened}/${FANOUT_CONNECTIONS} in ${o.ms} ms${o.failed ? `, ${o.failed} failed (${o.firstError})` : ''}`);
    if (!o.opened) throw new Error(`fan-out: no ${side.name} connection could be opened: ${o.firstError}`);
  }
  const publish = new Map<string, Publish>();
  for (const side of sides) publish.set(side.name, await side.publisher());
  const go = async (side: FanoutSide, mode: Mode, seconds: number, label: string) => {
    const r = await measureRun(clients, side.name, publish.get(side.name)!, side.pids, mode, seconds);
    log(`${label} ${side.name}: ${fmtRun(r)}`);
    return r;
  };
  const closedLoop: Mode = { kind: 'max', window: WINDOW };
  for (const side of sides) await go(side, closedLoop, 1, 'warm-up');
  const rounds = new Map<string, RunResult[]>(sides.map((s) => [s.name, []]));
  for (let i = 0; i < ROUNDS; i++) for (const side of sides) rounds.get(side.name)!.push(await go(side, closedLoop, SECONDS, `max round ${i + 1}/${ROUNDS}`));
  const out = new Map<string, FanoutResult>();
  for (const side of sides) out.set(side.name, { max: combineRuns(rounds.get(side.name)!), steady: await go(side, { kind: 'steady', rate: RATE }, SECONDS, `steady ${RATE}/s`) });
  for (const side of sides) await clients.all({ cmd: 'close', group: side.name });
  return out;
}

/** "61413 msg/s; p50 230.4 ms, p99 554.0 ms" */
export const fanoutFig = (r: RunResult) => `${Math.round(r.perS)} msg/s; p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms`;
export const fanoutCpuNote = (r: RunResult) =>
  `server CPU ${(r.serverCpu * 100).toFixed(0)}% (${r.serverUsPerMsg.toFixed(2)} µs per delivered msg), clients ${(r.clientCpu * 100).toFixed(0)}%`;
export const fanoutLost = (r: RunResult) => (r.delivered < r.expected ? `, ${r.expected - r.delivered} of ${r.expected} not delivered` : '');

async function fanoutPhase(clients: Clients): Promise<Row[]> {
  return withServer(
    () => startService(SERVICE_ENV),
    (svc) =>
      withServer(startRaw('ws'), async (base) => {
        const token = await tokenOf(svc);
        let sample = '';
        const [s, b] = await fanoutCompare(clients, [
          {
            name: 'baseline',
            srv: base,
            token,
            pids: [pidOfPort(portOf(base))],
            // One real message from the service is the bare server's payload.
            publisher: async () => {
              await clients.all({ cmd: 'run', group: 'service', run: 0, track: false });
              if ((await patchOrder1(svc, token)(noteOf(0, nowUs()))) !== 200) throw new Error('PATCH /orders/1 failed');
              for (let i = 0; i < 50 && !sample; i++) {
                await sleep(100);
                sample = (await clients.call<string | null>(0, { cmd: 'sample', group: 'service' })) ?? '';
              }
              if (!sample) throw new Error('no order.updated message reached the subscribers');
              log(`fan-out payload: ${Buffer.byteLength(sample)} bytes, e.g. ${sample.slice(0, 100)}...`);
              return publishRaw(base, sample);
            },
          },
          { name: 'service', srv: svc, token, pids: [pidOfPort(portOf(svc))], publisher: async () => patchOrder1(svc, token) },
        ]).then((m) => [m.get('service')!, m.get('baseline')!]);
        const backpressure = metric(await scrape(svc), 'orderline_stream_backpressure_closes_total') ?? 0;
        const bytes = Buffer.byteLength(sample);
        const n = s.max.subscribers;
        return [
          {
            scenario: 'ws-fanout-max',
            service: `${n} WebSocket subscribers of order:1; PATCH /orders/1 closed loop (${WINDOW} writes in flight, the next when one reached all subscribers); delivered msgs/s`,
            baseline: `bare \`ws\` server (bench/baseline/ws-raw.ts): POST /publish of the same ${bytes}-byte message, client.send() per client, same loop`,
            serviceFig: fanoutFig(s.max),
            baselineFig: fanoutFig(b.max),
            ratio: s.max.perS / b.max.perS,
            goal: `>= 0.60 (${s.max.perS / b.max.perS >= 0.6 ? 'met' : 'missed'})`,
            notes:
              `${ROUNDS} x ${SECONDS} s alternating; service ${s.max.writesPerS.toFixed(1)} writes/s, ${fanoutCpuNote(s.max)}${fanoutLost(s.max)}; ` +
              `baseline ${b.max.writesPerS.toFixed(1)} writes/s, ${fanoutCpuNote(b.max)}${fanoutLost(b.max)}; backpressure closes ${backpressure}`,
          },
          {
            scenario: 'ws-fanout-steady',
            service: `as ws-fanout-max, writes at a steady ${RATE}/s (${RATE * n} msgs/s offered) for ${SECONDS} s; publish-to-delivery latency`,
            baseline: 'bare `ws` server as in ws-fanout-max, same rate',
            serviceFig: fanoutFig(s.steady),
            baselineFig: fanoutFig(b.steady),
            ratio: s.steady.p99 / b.steady.p99,
            goal: 'reference (latency below saturation); ratio = p99 service / baseline',
            notes:
              `msgs/s service/baseline ${(s.steady.perS / b.steady.perS).toFixed(2)}; service max ${s.steady.max.toFixed(0)} ms, ${fanoutCpuNote(s.steady)}${fanoutLost(s.steady)}; ` +
              `baseline max ${b.steady.max.toFixed(0)} ms, ${fanoutCpuNote(b.steady)}${fanoutLost(b.steady)}`,
          },
        ];
      }),
  );
}

// ---- spec 1.5: one slow request must not stall streams ----------------------------------------

/** POST /orders with its body trickled one byte at a time over `ms`; resolves with the status. */
function tricklePost(svc: Running, token: string, ms: number): Promise<{ status: number; ms: number }> {
  const u = new URL(svc.url);
  const body = Buffer.from(JSON.stringify({ items: [{ sku: 'TRICKLE-1', quantity: 1, unit_price_cents: 100 }], currency: 'EUR', note: 'trickled' }));
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const s = connect({ host: u.hostname, port: Number(u.port) });
    s.setNoDelay(true);
    let answer = '';
    s.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
      if (answer.includes('\r\n\r\n')) {
        s.destroy();
        resolve({ status: Number(answer.split(' ')[1]), ms: Date.now() - started });
      }
    });
    s.on('error', reject);
    s.once('connect', async () => {
      s.write(
        `POST /orders HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      );
      const step = ms / body.length;
      for (let i = 0; i < body.length; i++) {
        await sleep(step);
        if (s.destroyed) return;
        s.write(body.subarray(i, i + 1));
      }
    });
  });
}

/** GraphQL queries at the cost ceiling, one in flight at a time, until `stop()`. */
function graphqlLoop(svc: Running, token: string): { stop: () => Promise<{ count: number; statuses: Record<number, number>; maxMs: number; meanMs: number }> } {
  let running = true;
  let count = 0;
  let maxMs = 0;
  let totalMs = 0;
  const statuses: Record<number, number> = {};
  const body = JSON.stringify({ query: GQL_CEILING });
  const loop = (async () => {
    while (running) {
      const t = Date.now();
      const r = await call(`${svc.url}/graphql`, 'POST', { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/graphql-response+json' }, body);
      const ms = Date.now() - t;
      count++;
      totalMs += ms;
      maxMs = Math.max(maxMs, ms);
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { count, statuses, maxMs, meanMs: count ? totalMs / count : 0 };
    },
  };
}

async function slowPhase(clients: Clients): Promise<Row[]> {
  return withServer(
    () => startService(SERVICE_ENV),
    async (svc) => {
      const token = await tokenOf(svc);
      const pids = [pidOfPort(portOf(svc))];
      const o = await clients.openWs('slow', svc, token, Array.from({ length: SLOW_CONNECTIONS }, () => 'order:1'), STREAM_CLIENT);
      log(`slow: opened ${o.opened}/${SLOW_CONNECTIONS} in ${o.ms} ms${o.failed ? `, ${o.failed} failed (${o.firstError})` : ''}`);
      const publish = patchOrder1(svc, token);
      const steady: Mode = { kind: 'steady', rate: SLOW_RATE };
      await measureRun(clients, 'slow', publish, pids, steady, 1); // warm-up
      const windows: { name: string; label: string; start: () => () => Promise<string> }[] = [
        { name: 'none', label: 'no slow request', start: () => async () => '' },
        {
          name: 'trickle',
          label: `one POST /orders whose body is trickled byte by byte over ${SLOW_SECONDS} s`,
          start: () => {
            const p = tricklePost(svc, token, SLOW_SECONDS * 1000);
            return async () => {
              const r = await p;
              return `trickled POST answered ${r.status} after ${(r.ms / 1000).toFixed(1)} s`;
            };
          },
        },
        {
          name: 'graphql',
          label: 'GraphQL queries at the cost ceiling back to back (one always in flight)',
          start: () => {
            const g = graphqlLoop(svc, token);
            return async () => {
              const r = await g.stop();
              const st = Object.entries(r.statuses)
                .map(([k, v]) => `${k}x${v}`)
                .join(',');
              return `${r.count} queries (${st}), mean ${r.meanMs.toFixed(1)} ms, max ${r.maxMs} ms`;
            };
          },
        },
      ];
      // Windows alternate (none, trickle, graphql, none, ...) for BENCH_RT_ROUNDS rounds.
      const per = new Map<string, { runs: RunResult[]; loops: number[]; notes: string[] }>(windows.map((w) => [w.name, { runs: [], loops: [], notes: [] }]));
      for (let round = 0; round < ROUNDS; round++) {
        for (const w of windows) {
          await loopP99(svc); // resets the histogram
          const stop = w.start();
          const run = await measureRun(clients, 'slow', publish, pids, steady, SLOW_SECONDS);
          const note = await stop();
          const loop = await loopP99(svc);
          log(`slow ${w.name} round ${round + 1}/${ROUNDS}: loop p99 ${loop?.toFixed(1)} ms; ${fmtRun(run)}${note ? `; ${note}` : ''}`);
          const acc = per.get(w.name)!;
          acc.runs.push(run);
          if (loop !== undefined) acc.loops.push(loop);
          if (note) acc.notes.push(`round ${round + 1}: ${note}`);
        }
      }
      await clients.all({ cmd: 'close', group: 'slow' });
      // Worst round, as in the other tables.
      const results = windows.map((w) => {
        const acc = per.get(w.name)!;
        return { name: w.name, label: w.label, run: combineRuns(acc.runs), loop: acc.loops.length ? Math.max(...acc.loops) : undefined, notes: acc.notes };
      });
      const none = results[0];
      const fig = (r: (typeof results)[number]) => `loop p99 ${r.loop?.toFixed(1) ?? 'n/a'} ms; delivery p99 ${r.run.p99.toFixed(1)} ms`;
      return results.map((r) => ({
        scenario: `slow-${r.name}`,
        service: `${r.run.subscribers} WebSocket subscribers of order:1, PATCH at ${SLOW_RATE}/s, ${ROUNDS} x ${SLOW_SECONDS} s windows; ${r.label}`,
        baseline: r === none ? 'reference for the slow-* rows' : 'the same service in the same run, no slow request (slow-none)',
        serviceFig: fig(r),
        baselineFig: r === none ? '' : fig(none),
        ratio: r === none ? undefined : r.run.p99 / none.run.p99,
        goal: r === none ? 'reference' : 'streams not stalled (delivery p99 ratio near 1)',
        notes:
          `delivery p50 ${r.run.p50.toFixed(1)} ms, max ${r.run.max.toFixed(0)} ms, ${r.run.delivered}/${r.run.expected} delivered` +
          `${r.run.errors ? `, ${r.run.errors} writes failed` : ''}; server CPU ${(r.run.serverCpu * 100).toFixed(0)}%` +
          `${r.notes.length ? `; ${r.notes.join('; ')}` : ''}`,
      }));
    },
  );
}

// ---- output -------------------------------------------------------------------------------------

export interface Row {
  scenario: string;
  service: string;
  baseline: string;
  serviceFig: string;
  baselineFig: string;
  ratio?: number;
  goal: string;
  notes: string;
}

export const HEADER = ['| scenario | service | baseline | service figure | baseline figure | ratio | goal | notes |', '|---|---|---|---|---|---|---|---|'];
const cell = (s: string) => s.replace(/\|/g, '\\|');
export const line = (r: Row) =>
  `| ${r.scenario} | ${cell(r.service)} | ${cell(r.baseline)} | ${cell(r.serviceFig)} | ${cell(r.baselineFig)} | ${r.ratio === undefined ? '' : r.ratio.toFixed(2)} | ${cell(r.goal)} | ${cell(r.notes)} |`;

const ROWS_MARK = '<!-- realtime rows -->';

function environment(): string {
  const cpu = cpus();
  return `${new Date().toISOString().slice(0, 10)}, ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

function settings(): string {
  return (
    `BENCH_RT_CONNECTIONS=${CONNECTIONS}, BENCH_RT_FANOUT_CONNECTIONS=${FANOUT_CONNECTIONS}, BENCH_RT_CLIENT_PROCS=${PROCS}, ` +
    `BENCH_RT_SECONDS=${SECONDS}, BENCH_RT_ROUNDS=${ROUNDS}, BENCH_RT_WINDOW=${WINDOW}, BENCH_RT_RATE=${RATE}, ` +
    `BENCH_RT_SLOW_CONNECTIONS=${SLOW_CONNECTIONS}, BENCH_RT_SLOW_RATE=${SLOW_RATE}, BENCH_RT_SLOW_SECONDS=${SLOW_SECONDS}, ` +
    `BENCH_RT_SETTLE_SECONDS=${SETTLE_S}, BENCH_RT_SAMPLES=${SAMPLES}`
  );
}

const METHOD = `## Realtime

Idle memory per connection, fan-out throughput and latency, and spec 1.5 (one slow request
must not stall streams), each with its baseline in the same run (\`bench/realtime.ts\`, about
3 minutes; \`--write\` rewrites this section only, keeping rows of phases not run):

\`\`\`sh
npm run --silent build && npx tsx bench/realtime.ts --write       # all phases
npx tsx bench/realtime.ts memory --write                           # one phase: memory, fanout or slow
BENCH_RT_CONNECTIONS=2000 npx tsx bench/realtime.ts                # smaller, printed only
\`\`\`

Settings (environment; rows below use the defaults): \`BENCH_RT_CONNECTIONS\` (10000),
\`BENCH_RT_FANOUT_CONNECTIONS\` (= connections), \`BENCH_RT_CLIENT_PROCS\` (2), \`BENCH_RT_SECONDS\` (5),
\`BENCH_RT_ROUNDS\` (2), \`BENCH_RT_WINDOW\` (2), \`BENCH_RT_RATE\` (2 writes/s),
\`BENCH_RT_SLOW_CONNECTIONS\` (1000), \`BENCH_RT_SLOW_RATE\` (20 writes/s), \`BENCH_RT_SLOW_SECONDS\` (5),
\`BENCH_RT_SETTLE_SECONDS\` (5), \`BENCH_RT_SAMPLES\` (5), \`BENCH_RT_OPEN_CONCURRENCY\` (100 per client
process), \`BENCH_RT_WARM_CONNECTIONS\` (200), \`BENCH_RT_STREAM_CLIENT\` (\`lean\`; \`ws\` uses the ws
client in the fan-out and slow phases too).

### Method

- **Processes.** The service runs as \`npm start\` runs it (\`node dist/src/main.js\`, fresh SQLite
  \`DATA_DIR\`, \`LOG_LEVEL=silent\`) with \`ACCEPT_RATE\`/\`ACCEPT_BURST\` at 1000000 so the accept
  limiter does not pace the bench. The baselines are one-file bare servers run with
  \`node -r tsx/cjs\`: \`bench/baseline/ws-raw.ts\` (a \`ws\` WebSocketServer, \`perMessageDeflate: false\`,
  that answers \`subscribe\` and keeps a Set per channel; no auth) and \`bench/baseline/sse-raw.ts\`
  (node:http holding \`text/event-stream\` responses with the service's headers and \`retry:\` line).
  Connections are held by 2 client processes (\`bench/lib/realtime-client.ts\`), opened 100 at a
  time per process, so no server shares an event loop with a client or with the bench.
- **Idle memory per connection** (\`*-idle-memory\`). Each server is started fresh; 200
  connections are opened and closed (warm-up); then RSS (\`VmRSS\` of the server's pid in
  \`/proc/<pid>/status\`; the pid is found by its listening socket) and V8 heap used
  (\`nodejs_heap_size_used_bytes\` from \`/metrics\`; the baselines expose the same name) are
  sampled 5 times 500 ms apart and the median kept; then 10000 connections are opened, each
  subscribed to one of the demo orders 1-5 (WebSocket: the \`ws\` client, \`perMessageDeflate:
  false\`, \`subscribe\` answered by \`subscribed\`; SSE: raw sockets, the 200 and \`retry:\`), left
  idle 5 s and sampled again. Per connection = (after - before) / opened. A GC cannot be forced
  from outside, so the heap figure may include garbage of the handshakes (waiting 20 s instead
  of 5 s did not change the figures by more than 10%); kernel socket buffers are not in RSS.
  An SSE stream of the service is a Koa request that never finishes, so its context, request
  and response objects and the middleware's closures live as long as the stream; the bare
  server keeps only node's IncomingMessage/ServerResponse.
- **Fan-out** (\`ws-fanout-*\`). The service and the bare ws server each get 10000 WebSocket
  subscribers of \`order:1\`, all open at once. A write is \`PATCH /orders/1\` (\`If-Match: *\`,
  merge-patch \`{"note":"r=<run> t=<µs>"}\`) on the service; on the bare server it is \`POST
  /publish\` of one real \`order.updated\` message taken from the service (note replaced, same
  size), sent with \`client.send()\` per client. t is the send time on CLOCK_MONOTONIC
  (\`process.hrtime\`, common to all processes of the machine); each client reads t from the
  frame and records receive time - t in a log histogram (1% buckets): latency is
  publish-to-delivery, including the write's own processing. \`ws-fanout-max\`: closed loop,
  2 writes in flight, the next issued when one has reached every subscriber; 2 rounds x 5 s
  alternating baseline and service after 1 s of warm-up each; delivered msgs/s = messages
  received by all subscribers / (last delivery - first send), mean of the rounds; p99 is the
  worst round's. \`ws-fanout-steady\`: open loop at 2 writes/s (20000 msgs/s) for 5 s, below
  both sides' saturation. Here the clients are a lean WebSocket client (raw socket, RFC 6455
  handshake, minimal frame reader, no JSON.parse): with the \`ws\` client the 2 client
  processes needed more CPU than either server and bounded both sides alike. Server CPU is the
  server process's utime+stime over the run (\`/proc/<pid>/stat\`), also given per delivered
  message, the figure that isolates the server from the shared machine.
- **One slow request must not stall streams** (spec 1.5, \`slow-*\`). 1000 subscribers of
  \`order:1\` on one service, PATCH at 20/s, three 5 s windows, alternating for 2 rounds (worst
  round reported): nothing else; one \`POST /orders\` whose ~100-byte body is trickled one byte
  at a time over the window (raw socket); GraphQL
  \`{ user(id: "u1") { posts { comments { author { name } } } } }\` back to back, one always in
  flight. "loop p99" is prom-client's \`nodejs_eventloop_lag_p99_seconds\` from the service's
  \`/metrics\`, scraped just before the window (the scrape resets it) and just after; prom-client
  samples every 10 ms, so it reads about 10 ms plus the longest stalls. Delivery p99 as in
  fan-out; ratio = delivery p99 with / without the slow request.
- **Machine.** 2 cores shared by both servers, the 2 client processes and the bench: msgs/s are
  what the whole machine delivers while one server works; absolute numbers vary between
  machines, ratios and CPU per message less.
`;

function writeSection(rows: Row[], env: string, phases: readonly string[]): void {
  const file = join(root, 'BENCHMARKS.md');
  const text = readFileSync(file, 'utf8');
  const startIdx = text.search(/^## Realtime\s*$/m);
  let before = text;
  let after = '';
  let old: string[] = [];
  if (startIdx >= 0) {
    before = text.slice(0, startIdx);
    const rest = text.slice(startIdx + '## Realtime'.length);
    const next = rest.search(/^## /m);
    const section = next >= 0 ? rest.slice(0, next) : rest;
    after = next >= 0 ? rest.slice(next) : '';
    old = section.split('\n').filter((l) => /^\| [a-z0-9-]+ \|/.test(l) && !l.startsWith('| scenario |'));
  }
  const byName = new Map<string, string>();
  for (const l of old) byName.set(l.split('|')[1].trim(), l);
  for (const r of rows) byName.set(r.scenario, line(r));
  const order = ['ws-idle-memory', 'sse-idle-memory', 'ws-fanout-max', 'ws-fanout-steady', 'slow-none', 'slow-trickle', 'slow-graphql'];
  const names = [...byName.keys()].sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99));
  const section =
    `${METHOD}\n### Results\n\n` +
    `Realtime last run: ${env} (phases: ${phases.join(', ')}; ${settings()}).\n\n` +
    `${HEADER.join('\n')}\n${names.map((n) => byName.get(n)).join('\n')}\n${ROWS_MARK}\n`;
  const head = before.endsWith('\n\n') ? before : before.endsWith('\n') ? `${before}\n` : `${before}\n\n`;
  writeFileSync(file, head + section + (after ? `\n${after}` : ''));
}

// ---- main -------------------------------------------------------------------------------------

const PHASES = ['memory', 'fanout', 'slow'] as const;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const bad = args.filter((a) => (a.startsWith('--') ? a !== '--write' : !(PHASES as readonly string[]).includes(a)));
  if (bad.length) throw new Error(`unknown argument ${bad.join(' ')}; usage: bench/realtime.ts [${PHASES.join('] [')}] [--write]`);
  if (!targetOverride && !existsSync(serviceEntry)) throw new Error('dist/src/main.js is missing: run npm run build first');
  const named = args.filter((a) => !a.startsWith('--'));
  const phases = named.length ? PHASES.filter((p) => named.includes(p)) : PHASES;
  const env = environment();
  console.log(`bench realtime: ${env}; ${settings()}`);
  if (targetOverride) console.log(`bench realtime: target is BENCH_TARGET_CMD=${targetOverride}`);
  const rows: Row[] = [];
  const started = Date.now();
  await withClients(async (clients) => {
    for (const p of phases) {
      console.error(`${p}:`);
      const t = Date.now();
      const got = p === 'memory' ? await memoryPhase(clients) : p === 'fanout' ? await fanoutPhase(clients) : await slowPhase(clients);
      log(`${p} took ${((Date.now() - t) / 1000).toFixed(0)} s`);
      rows.push(...got);
    }
  });
  console.log(HEADER.join('\n'));
  for (const r of rows) console.log(line(r));
  console.log(`bench realtime: ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (args.includes('--write')) {
    writeSection(rows, env, phases);
    console.log(`bench realtime: wrote ${rows.length} row(s) to the Realtime section of BENCHMARKS.md`);
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`bench realtime: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    process.exit(1);
  });
}
