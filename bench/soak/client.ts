/**
 * A subscriber process of bench/soak.ts (forked with `-r tsx/cjs`, driven over IPC): holds
 * WebSocket and SSE subscribers that know only the contract (contracts/asyncapi.yaml), so
 * the soak's load side never shares an event loop with the server it measures.
 *
 * Each subscriber follows one order across every reconnect. It resumes with its last seq
 * (WebSocket `subscribe.since`, SSE `Last-Event-ID`), judges every message by the wire
 * rule in a SeqAccount (seqs.ts), GETs the order on a gap or a `resync` as the contract
 * says, and reconnects with backoff and jitter (as the SDK does: base * 2^attempt + random(0,
 * base), jitter on the first attempt too), to the next instance when its own refuses
 * connections. A refusal's Retry-After (HTTP 503 from the accept limiter, on the WebSocket
 * upgrade or the SSE request) is honoured as the SDK's realtime client honours it: the
 * waits are the SDK's own (`Reconnects`: the backoff after a drop or a failure, Retry-After
 * plus random(0, 1 s) after a refusal that says one). `churn` cuts subscribers from the client side; they resume like after
 * any drop.
 *
 * For bench/storm.ts, `mark` starts a storm's account: from then on each subscriber counts
 * its refusals (503) and other failed attempts, and notes when it is subscribed again after
 * its connection was lost; `storm` reads that account.
 */
import { request, type ClientRequest } from 'node:http';
import WebSocket from 'ws';
import { Reconnects, refusalRetryAfter, type Backoff } from '@orderline/sdk/realtime';
import { SeqAccount, addCounts, zeroCounts, type SeqCounts } from './seqs';

export type Kind = 'ws' | 'sse';

export interface SubSpec {
  kind: Kind;
  orderId: number;
  /** The seq the subscriber has seen when it starts (the order's revision then). */
  start: number;
  /** Index of the instance it connects to first. */
  home: number;
}

export type SubCommand =
  | { cmd: 'open'; subs: SubSpec[]; urls: string[]; token: string; backoff: Backoff; concurrency: number }
  | { cmd: 'churn'; n: number }
  | { cmd: 'mark' }
  | { cmd: 'storm' }
  | { cmd: 'attempts' }
  | { cmd: 'stats' }
  | { cmd: 'settle'; heads: Record<number, number>; ms: number }
  | { cmd: 'report'; heads: Record<number, number> }
  | { cmd: 'close' }
  | { cmd: 'exit' };

export interface SubStats {
  subscribers: number;
  connected: number;
  /** Connections that reached `subscribed` (the first ones included). */
  connects: number;
  /** Connection attempts that failed (refused, 503, closed before `subscribed`). */
  failedConnects: number;
  /** Subscribers cut by `churn`. */
  churned: number;
  /** Closes by the server or the network (not by churn), by WebSocket close code or `sse-end`/`error`. */
  closes: Record<string, number>;
  /** HTTP statuses of refused connection attempts (WebSocket upgrade, SSE request). */
  refusals: Record<string, number>;
  /** `error` messages (WebSocket) by code. */
  errors: Record<string, number>;
  /** GETs made on a gap or a resync, and how many failed. */
  gets: number;
  getFailures: number;
  /** Messages no rule covers (an unknown `type`, an event without seq). */
  unknown: number;
  /** Instances the subscribers are connected to now, by index. */
  perInstance: Record<string, number>;
  counts: SeqCounts;
}

/** One process's subscribers since the last `mark` (times are Date.now() ms). */
export interface StormSample {
  subscribers: number;
  connected: number;
  /** Subscribers whose connection was lost since the mark. */
  dropped: number;
  /** Of those, the ones subscribed again, and when each was (first subscription after its loss). */
  backAt: number[];
  /** 503 refusals of each subscriber that was dropped (one entry per dropped subscriber). */
  refused: number[];
  /** Other failed attempts (connection refused or reset, closed before `subscribed`), summed. */
  failed: number;
  /** Subscribers that, since the mark, lost events (seqs still missing), saw duplicates, were told to resync. */
  withLost: number;
  withDuplicates: number;
  withResyncs: number;
}

/**
 * The storm's offered load as this process made it since the mark: when each connection
 * attempt started, and how late each reconnect timer fired (ms after it was due; a process
 * short of CPU fires them late, which would soften the storm it is meant to make).
 */
export interface Attempts {
  at: number[];
  lateMs: number[];
}

export interface SubReport {
  byKind: Record<Kind, SeqCounts & { subscribers: number }>;
  /** Subscribers whose last seq is not their order's head. */
  behind: number;
  /** A few subscribers with anything wrong, for the report. */
  notes: string[];
}

const bump = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);

class Sub {
  readonly acct: SeqAccount;
  instance: number;
  connected = false;
  private readonly reconnects: Reconnects;
  /** The current connection's number: handlers of an older (cut) connection see another one and do nothing. */
  private gen = 0;
  private cut?: () => void;
  private timer?: NodeJS.Timeout;
  private sinceSent = 0;
  /** Since the last `mark`: lost its connection, when it was subscribed again (0: not yet), refusals, other failures; its counts at the mark. */
  storm = { dropped: false, backAt: 0, refused: 0, failed: 0, counts: zeroCounts() };

  constructor(
    readonly spec: SubSpec,
    private readonly ctx: Ctx,
  ) {
    this.acct = new SeqAccount(spec.start);
    this.instance = spec.home;
    this.reconnects = new Reconnects(ctx.backoff);
  }

  /** Opens a connection; resolves once subscribed or failed (a failure schedules the retry). */
  connect(): Promise<void> {
    this.timer = undefined;
    if (this.ctx.closing) return Promise.resolve();
    attempts.at.push(Date.now());
    const gen = ++this.gen;
    return new Promise<void>((settled) => (this.spec.kind === 'ws' ? this.openWs(gen, settled) : this.openSse(gen, settled)));
  }

  /** Ends the current connection from this side; nothing it still delivers is read. */
  private drop(): void {
    this.gen++;
    this.connected = false;
    const cut = this.cut;
    this.cut = undefined;
    cut?.();
  }

  /** Cuts the connection from the client side; it resumes after the backoff. */
  churn(): void {
    if (!this.connected) return;
    stats.churned++;
    this.drop();
    this.retry();
  }

  close(): void {
    clearTimeout(this.timer);
    this.drop();
  }

  /** Schedules the next attempt after the SDK's wait (`retryAfterS`: a refusal's Retry-After). */
  private retry(retryAfterS?: number): void {
    if (this.ctx.closing || this.timer) return;
    const delay = this.reconnects.next(retryAfterS);
    const due = Date.now() + delay;
    this.timer = setTimeout(() => {
      attempts.lateMs.push(Date.now() - due);
      void this.connect();
    }, delay);
  }

  /**
   * A connection attempt that failed (`why`: the HTTP status of a refusal, with its
   * Retry-After header); refused connections move to the next instance.
   */
  private failed(why: string, moveOn: boolean, retryAfter?: string | string[]): void {
    const status = why === '' ? undefined : Number(why);
    this.drop();
    stats.failedConnects++;
    if (why) bump(stats.refusals, why);
    if (why === '503') this.storm.refused++;
    else this.storm.failed++;
    if (moveOn) this.instance = (this.instance + 1) % this.ctx.urls.length;
    this.retry(refusalRetryAfter(status, retryAfter));
  }

  /** A live connection ended without our asking. */
  private lost(how: string): void {
    this.drop();
    bump(stats.closes, how);
    this.storm.dropped = true;
    this.storm.backAt = 0;
    this.retry();
  }

  /** The connection `gen` ended (closed, reset, refused): lost when it was live, a failed attempt otherwise. */
  private ended(gen: number, how: string, refused: boolean): void {
    if (gen !== this.gen) return;
    if (this.connected) this.lost(how);
    else this.failed('', refused);
  }

  private get(): void {
    stats.gets++;
    fetch(`${this.ctx.urls[this.instance]}/orders/${this.spec.orderId}`, { headers: { authorization: `Bearer ${this.ctx.token}` }, signal: AbortSignal.timeout(10_000) })
      .then(async (res) => {
        await res.arrayBuffer();
        if (res.status !== 200) stats.getFailures++;
      })
      .catch(() => stats.getFailures++);
  }

  /**
   * One message of connection `gen`, by the wire rule; `subscribed` makes it live. The GET a
   * gap or a resync calls for runs beside the stream: the account does not depend on its answer.
   */
  private onMessage(gen: number, type: string, seq: number | null, code?: string): void {
    if (gen !== this.gen) return;
    if (type === 'subscribed' && seq !== null) {
      this.acct.subscribed(seq, this.sinceSent);
      this.connected = true;
      this.reconnects.reset();
      stats.connects++;
      if (this.storm.dropped && this.storm.backAt === 0) this.storm.backAt = Date.now();
    } else if (type === 'resync' && seq !== null) {
      this.acct.resync(seq);
      this.get();
    } else if (type.startsWith('order.') && seq !== null) {
      if (this.acct.event(seq) === 'gap') this.get();
    } else if (type === 'error') {
      // No subscription exists (e.g. `unavailable`): cut, and subscribe again later.
      bump(stats.errors, code ?? 'unknown');
      this.failed('', false);
    } else if (type !== 'unsubscribed') stats.unknown++;
  }

  private openWs(gen: number, settled: () => void): void {
    const url = `${this.ctx.urls[this.instance].replace(/^http/, 'ws')}/orders`;
    const ws = new WebSocket(url, { perMessageDeflate: false, headers: { authorization: `Bearer ${this.ctx.token}` } });
    this.cut = () => ws.terminate();
    const settle = () => {
      if (gen !== this.gen || this.connected) settled();
    };
    ws.on('error', () => undefined); // a close follows
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      if (gen === this.gen) this.failed(String(res.statusCode), false, res.headers['retry-after']);
      settled();
    });
    ws.once('open', () => {
      if (gen !== this.gen) return;
      this.sinceSent = this.acct.since();
      ws.send(JSON.stringify({ type: 'subscribe', channel: `order:${this.spec.orderId}`, since: this.sinceSent }));
    });
    ws.on('message', (d) => {
      let m: { type?: unknown; seq?: unknown; code?: unknown };
      try {
        m = JSON.parse((d as Buffer).toString()) as typeof m;
      } catch {
        stats.unknown++;
        return;
      }
      this.onMessage(gen, typeof m.type === 'string' ? m.type : '', typeof m.seq === 'number' ? m.seq : null, typeof m.code === 'string' ? m.code : undefined);
      settle();
    });
    ws.once('close', (code) => {
      // Closed before it opened: the instance refuses connections (gone); move on.
      this.ended(gen, String(code), code === 1006 && !this.connected);
      settled();
    });
  }

  private openSse(gen: number, settled: () => void): void {
    const u = new URL(`${this.ctx.urls[this.instance]}/api/orders/${this.spec.orderId}/stream`);
    const since = this.acct.since();
    const req: ClientRequest = request(u, { agent: false, headers: { accept: 'text/event-stream', authorization: `Bearer ${this.ctx.token}`, 'last-event-id': String(since) } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        if (gen === this.gen) this.failed(String(res.statusCode), false, res.headers['retry-after']);
        return settled();
      }
      this.sinceSent = since;
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        buf += chunk;
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const ev = parseBlock(buf.slice(0, cut));
          buf = buf.slice(cut + 2);
          if (ev.id === undefined || ev.data === undefined) continue; // retry:, comments (heartbeats)
          const seq = Number(ev.id);
          this.onMessage(gen, ev.event ?? 'message', Number.isInteger(seq) ? seq : null);
          if (gen !== this.gen || this.connected) settled();
        }
      });
      res.once('close', () => {
        this.ended(gen, 'sse-end', false);
        settled();
      });
    });
    this.cut = () => req.destroy();
    req.once('error', (err: NodeJS.ErrnoException) => {
      this.ended(gen, 'error', err.code === 'ECONNREFUSED');
      settled();
    });
    req.end();
  }
}

/**
 * One SSE block's fields (WHATWG EventSource parsing, the subset the service sends: no
 * multi-line data). Written here, not taken from eventsource-parser, because that is only a
 * transitive dependency of this repository.
 */
export function parseBlock(block: string): { id?: string; event?: string; data?: string } {
  const out: { id?: string; event?: string; data?: string } = {};
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const i = line.indexOf(':');
    const key = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
    if (key === 'id' || key === 'event' || key === 'data') out[key] = value;
  }
  return out;
}

interface Ctx {
  urls: string[];
  token: string;
  backoff: Backoff;
  closing: boolean;
}

const ctx: Ctx = { urls: [], token: '', backoff: { baseMs: 100, capMs: 6400 }, closing: false };
const subs: Sub[] = [];
let attempts: Attempts = { at: [], lateMs: [] };
const stats = { connects: 0, failedConnects: 0, churned: 0, closes: {} as Record<string, number>, refusals: {} as Record<string, number>, errors: {} as Record<string, number>, gets: 0, getFailures: 0, unknown: 0 };

async function open(specs: SubSpec[], concurrency: number): Promise<number> {
  const mine = specs.map((s) => new Sub(s, ctx));
  subs.push(...mine);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(concurrency, mine.length)) }, async () => {
      while (next < mine.length) await mine[next++].connect();
    }),
  );
  return mine.filter((s) => s.connected).length;
}

function snapshot(): SubStats {
  const perInstance: Record<string, number> = {};
  let counts = zeroCounts();
  for (const s of subs) {
    if (s.connected) bump(perInstance, String(s.instance));
    counts = addCounts(counts, s.acct.finish());
  }
  return { subscribers: subs.length, connected: subs.filter((s) => s.connected).length, ...stats, perInstance, counts };
}

function stormSample(): StormSample {
  const dropped = subs.filter((s) => s.storm.dropped);
  return {
    subscribers: subs.length,
    connected: subs.filter((s) => s.connected).length,
    dropped: dropped.length,
    backAt: dropped.filter((s) => s.storm.backAt > 0).map((s) => s.storm.backAt),
    refused: dropped.map((s) => s.storm.refused),
    failed: subs.reduce((n, s) => n + s.storm.failed, 0),
    ...changed(),
  };
}

/** How many subscribers' lost, duplicate and resync counts grew since the mark. */
function changed(): Pick<StormSample, 'withLost' | 'withDuplicates' | 'withResyncs'> {
  const out = { withLost: 0, withDuplicates: 0, withResyncs: 0 };
  for (const s of subs) {
    const now = s.acct.finish();
    if (now.lost > s.storm.counts.lost) out.withLost++;
    if (now.duplicates > s.storm.counts.duplicates) out.withDuplicates++;
    if (now.resyncs > s.storm.counts.resyncs) out.withResyncs++;
  }
  return out;
}

async function settle(heads: Record<number, number>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  const ok = () => subs.every((s) => s.connected && s.acct.last >= (heads[s.spec.orderId] ?? 0));
  while (!ok() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  return ok();
}

function report(heads: Record<number, number>): SubReport {
  const byKind = { ws: { ...zeroCounts(), subscribers: 0 }, sse: { ...zeroCounts(), subscribers: 0 } };
  const notes: string[] = [];
  let behind = 0;
  for (const s of subs) {
    const head = heads[s.spec.orderId] ?? s.acct.last;
    const c = s.acct.finish(head);
    byKind[s.spec.kind] = { ...addCounts(byKind[s.spec.kind], c), subscribers: byKind[s.spec.kind].subscribers + 1 };
    if (s.acct.last !== head) behind++;
    if ((c.lost || c.duplicates || c.violations || s.acct.last !== head) && notes.length < 10)
      notes.push(`${s.spec.kind} order ${s.spec.orderId}: last ${s.acct.last}, head ${head}, lost ${c.lost}, duplicates ${c.duplicates}${s.acct.notes.length ? `; ${s.acct.notes.join('; ')}` : ''}`);
  }
  return { byKind, behind, notes };
}

async function handle(m: SubCommand): Promise<unknown> {
  switch (m.cmd) {
    case 'open':
      Object.assign(ctx, { urls: m.urls, token: m.token, backoff: m.backoff });
      return open(m.subs, m.concurrency);
    case 'churn': {
      const live = subs.filter((s) => s.connected);
      for (let i = 0; i < m.n && live.length > 0; i++) live.splice(Math.floor(Math.random() * live.length), 1)[0].churn();
      return null;
    }
    case 'stats':
      return snapshot();
    case 'mark':
      for (const s of subs) s.storm = { dropped: false, backAt: 0, refused: 0, failed: 0, counts: s.acct.finish() };
      attempts = { at: [], lateMs: [] };
      return null;
    case 'attempts':
      return attempts;
    case 'storm':
      return stormSample();
    case 'settle':
      return settle(m.heads, m.ms);
    case 'report':
      return report(m.heads);
    case 'close':
      ctx.closing = true;
      for (const s of subs) s.close();
      return null;
    case 'exit':
      setImmediate(() => process.exit(0));
      return null;
  }
}

if (process.send) {
  process.on('message', (msg: SubCommand & { id: number }) => {
    handle(msg).then(
      (result) => process.send!({ id: msg.id, ok: true, result }),
      (err: unknown) => process.send!({ id: msg.id, ok: false, error: err instanceof Error ? err.message : String(err) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
