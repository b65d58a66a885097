/**
 * The soak's request load, open loop at fixed rates per kind: reads (a share conditional,
 * If-None-Match with the ETag this reader last saw), lists, GraphQL queries, and writes.
 * Writes follow the contract's rules for safe retries, so every one is accounted for:
 *
 * - an update is a PATCH of the order's note with If-Match (the ETag of the previous write
 *   to it, one writer per order), so it applies at most once: when its answer is lost (an
 *   instance killed), it is sent again, same If-Match and note, to another instance: 200
 *   means it had not been applied; 412 and the order showing this write's note mean it had;
 * - a create is a POST with an Idempotency-Key: resent with the same key, `Idempotent-Replayed:
 *   true` says it had been applied.
 *
 * At the end `verify` reads every order back: each acknowledged or recovered write must be
 * there exactly once (the If-Match chain makes the order's revision and last note prove it).
 */
import { randomUUID } from 'node:crypto';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { bucketOf, newHist, nowUs, quantileMs } from '../lib/realtime-hist';

export type ReqKind = 'read' | 'conditional' | 'list' | 'graphql' | 'update' | 'create';
export const REQ_KINDS: ReqKind[] = ['read', 'conditional', 'list', 'graphql', 'update', 'create'];

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Whether the request went out on a connection it opened (false: a kept-alive one). */
  opened: boolean;
}

/** Network failures: the request may or may not have reached the server (`code`: ECONNRESET, ECONNREFUSED, timeout...). */
export class NoAnswer extends Error {
  constructor(
    message: string,
    readonly code = 'error',
  ) {
    super(message);
  }
}

/** Whether an error answer says what happened in its transport's way: GraphQL `errors` with `extensions.code`, REST problem+json. */
function explains(kind: ReqKind, a: Answer): boolean {
  const type = String(a.headers['content-type']);
  if (kind !== 'graphql') return type.startsWith('application/problem+json');
  try {
    const body = JSON.parse(a.body) as { errors?: { extensions?: { code?: unknown } }[] };
    return typeof body.errors?.[0]?.extensions?.code === 'string';
  } catch {
    return false;
  }
}

/**
 * What a failed write attempt says about itself: `refused` when it cannot have been
 * applied (a 503, which the service answers before any write, e.g. while it drains; a
 * connection refused, so nothing was sent), `unknown` when it may have been (a reset or a
 * timeout after the request was sent, any other 5xx).
 */
export function failureOf(a: { status: number } | { code: string }): 'refused' | 'unknown' {
  if ('status' in a) return a.status === 503 ? 'refused' : 'unknown';
  return a.code === 'ECONNREFUSED' ? 'refused' : 'unknown';
}

/** One request attempt, as `Load.onAttempt` hears of it: when it was sent and answered (Date.now() ms), and its status or failure code. */
export interface Attempt {
  kind: ReqKind;
  sentAt: number;
  doneAt: number;
  ms: number;
  status?: number;
  code?: string;
  /** Answered on a connection the request opened (false: a kept-alive one); unset when unanswered. */
  opened?: boolean;
  /**
   * A 5xx's shape (unset below 500): whether it says what happened in its transport's
   * way (REST: problem+json; GraphQL: `errors` with `extensions.code`), and whether it has a Retry-After.
   */
  explained?: boolean;
  retryAfter?: boolean;
}

/**
 * What a PATCH's answer says, when an earlier attempt of the same write (same If-Match, same
 * note) may have been applied without its answer reaching us (`lost`): 200 applied it now
 * (so the earlier one had not been); 412 with the order showing this write's note means the
 * earlier attempt had applied it (this order has one writer, so no one else wrote that note).
 */
export function patchOutcome(status: number, lost: boolean, noteNow: string | undefined, note: string): 'acked' | 'applied-on-retry' | 'applied-before' | 'conflict' | 'retry' | 'refused' {
  if (status === 200) return lost ? 'applied-on-retry' : 'acked';
  if (status === 412) return lost && noteNow === note ? 'applied-before' : 'conflict';
  if (status >= 500) return 'retry';
  return 'refused';
}

/** What a create's 201 says: `Idempotent-Replayed: true` on a resend means the lost attempt had created it. */
export function createOutcome(lost: boolean, replayed: string | string[] | undefined): 'acked' | 'applied-on-retry' | 'applied-before' {
  if (!lost) return 'acked';
  return replayed === 'true' ? 'applied-before' : 'applied-on-retry';
}

const GQL_ORDER = 'query SoakOrder($id: ID!) { order(id: $id) { id status note revision } }';
const TIMEOUT_MS = 10_000;
const MAX_IN_FLIGHT = 64;

interface OrderState {
  id: number;
  etag: string;
  /** The revision every write so far makes it (1 on create) and the note of the last one. */
  rev: number;
  note: string;
  busy: boolean;
  writes: number;
}

export interface KindStats {
  sent: number;
  statuses: Record<string, number>;
  /** Requests that got no answer (reset, refused, timed out). */
  noAnswer: number;
  /** Not sent: MAX_IN_FLIGHT of that kind were still waiting. */
  skipped: number;
  hist: number[];
}

export interface WriteBook {
  acked: number;
  /** Writes whose answer was lost, by what the retry found: applied before the loss, applied by the retry. */
  unackedAppliedBefore: number;
  unackedAppliedOnRetry: number;
  /** 412 on a write that is this order's only writer, not explained by a lost answer. */
  conflicts: number;
  /** Write attempts that failed in a way that cannot have applied them (503, connection refused): see `failureOf`. */
  refusedAttempts: number;
  /** Writes whose failed attempts were all refusals and which were found applied anyway (must be 0). */
  refusedButApplied: number;
  /** Anything the rules say cannot happen (e.g. a 412 retry whose order does not show the write). */
  anomalies: string[];
}

export interface Verified {
  orders: number;
  /** Orders whose revision or last note is not what the writes acknowledged. */
  wrongState: string[];
  /** Creates not found exactly once (by their unique note). */
  createsNotOnce: string[];
  /** The final revision per subscribed order (the topics' heads). */
  heads: Record<number, number>;
}

export class Load {
  private readonly agents: Agent[];
  private readonly down = new Set<number>();
  private rr = 0;
  readonly stats = new Map<ReqKind, KindStats>(REQ_KINDS.map((k) => [k, { sent: 0, statuses: {}, noAnswer: 0, skipped: 0, hist: newHist() }]));
  private readonly inFlight = new Map<ReqKind, number>(REQ_KINDS.map((k) => [k, 0]));
  readonly book: WriteBook = { acked: 0, unackedAppliedBefore: 0, unackedAppliedOnRetry: 0, conflicts: 0, refusedAttempts: 0, refusedButApplied: 0, anomalies: [] };
  /** Told of every attempt (bench/storm.ts times them against a restart). */
  onAttempt?: (a: Attempt) => void;
  private readonly seen = new Map<number, string>();
  readonly orders: OrderState[] = [];
  readonly creates: { key: string; note: string; id?: number }[] = [];
  private timer?: NodeJS.Timeout;
  /** Writes sent to each instance and not answered yet (the failover kills an instance while one is). */
  readonly writesInFlight: number[] = [];
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    readonly urls: string[],
    private readonly token: string,
  ) {
    this.agents = urls.map(() => new Agent({ keepAlive: true, maxSockets: 64 }));
  }

  /** An instance to send to: round-robin over those not known to be down. */
  private pick(avoid?: number): number {
    for (let i = 0; i < this.urls.length; i++) {
      const k = this.rr++ % this.urls.length;
      if (!this.down.has(k) && k !== avoid) return k;
    }
    return avoid ?? 0;
  }

  /** One request; throws NoAnswer on network failures (an instance refusing connections is marked down). */
  send(method: string, path: string, headers: Record<string, string> = {}, body?: string, at = this.pick()): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const h: Record<string, string> = { authorization: `Bearer ${this.token}`, ...headers };
      if (body !== undefined) h['content-length'] = String(Buffer.byteLength(body));
      const req = request(`${this.urls[at]}${path}`, { method, headers: h, agent: this.agents[at], timeout: TIMEOUT_MS }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString(), opened: !req.reusedSocket }));
        res.on('error', (err) => reject(new NoAnswer(err.message)));
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ECONNREFUSED') this.down.add(at);
        reject(new NoAnswer(`${this.urls[at]}: ${err.code ?? err.message}`, err.code ?? (err.message === 'timeout' ? 'timeout' : 'error')));
      });
      req.end(body);
    });
  }

  /** `send`, timed and counted under `kind`; NoAnswer is counted and rethrown. */
  private async timed(kind: ReqKind, method: string, path: string, headers?: Record<string, string>, body?: string, at = this.pick()): Promise<Answer> {
    const s = this.stats.get(kind)!;
    s.sent++;
    const t = nowUs();
    const sentAt = Date.now();
    const write = kind === 'update' || kind === 'create';
    if (write) this.writesInFlight[at] = (this.writesInFlight[at] ?? 0) + 1;
    try {
      const a = await this.send(method, path, headers, body, at);
      const us = nowUs() - t;
      s.hist[bucketOf(us)]++;
      s.statuses[a.status] = (s.statuses[a.status] ?? 0) + 1;
      const shape = a.status >= 500 ? { explained: explains(kind, a), retryAfter: a.headers['retry-after'] !== undefined } : {};
      this.onAttempt?.({ kind, sentAt, doneAt: Date.now(), ms: us / 1000, status: a.status, ...shape });
      return a;
    } catch (err) {
      s.noAnswer++;
      this.onAttempt?.({ kind, sentAt, doneAt: Date.now(), ms: (nowUs() - t) / 1000, code: err instanceof NoAnswer ? err.code : 'error' });
      throw err;
    } finally {
      if (write) this.writesInFlight[at]--;
    }
  }

  /** Creates the subscribed orders (with Idempotency-Key, as every create). */
  async seed(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const c = await this.create(true);
      this.orders.push({ id: c.id, etag: c.etag, rev: 1, note: c.note, busy: false, writes: 0 });
    }
  }

  /** POST /orders with an Idempotency-Key, resent (same key) until answered. */
  private async create(seeding = false): Promise<{ id: number; etag: string; note: string }> {
    const key = randomUUID();
    const note = `c-${key}`;
    const entry: { key: string; note: string; id?: number } = { key, note };
    if (!seeding) this.creates.push(entry);
    const body = JSON.stringify({ note });
    let lost = false;
    for (let attempt = 0; ; attempt++) {
      let a: Answer;
      try {
        a = await this.timed('create', 'POST', '/orders', { 'content-type': 'application/json', 'idempotency-key': key }, body);
      } catch (err) {
        if (!(err instanceof NoAnswer) || attempt > 50) throw err;
        lost = true;
        await sleep(200);
        continue;
      }
      if (a.status === 201) {
        const id = (JSON.parse(a.body) as { id: number }).id;
        entry.id = id;
        this.count(createOutcome(lost, a.headers['idempotent-replayed']));
        return { id, etag: String(a.headers.etag), note };
      }
      // In flight elsewhere (an instance died holding the key): retry later, as the contract says.
      if ((a.status === 409 || a.status >= 500) && attempt < 100) {
        lost = true;
        await sleep(1000);
        continue;
      }
      throw new Error(`create answered ${a.status}: ${a.body.slice(0, 200)}`);
    }
  }

  /** One PATCH of a random idle order's note, resent on a lost answer until the order's state tells. */
  private async update(): Promise<void> {
    const idle = this.orders.filter((o) => !o.busy);
    if (idle.length === 0) return void this.stats.get('update')!.skipped++;
    const o = idle[Math.floor(Math.random() * idle.length)];
    o.busy = true;
    const note = `u-${o.id}-${++o.writes}`;
    const body = JSON.stringify({ note });
    const headers = { 'content-type': 'application/merge-patch+json', 'if-match': o.etag };
    let lost = false;
    /** A failed attempt of this write that may have applied it (a lost answer); refusals alone cannot have. */
    let unknown = false;
    const failure = (f: { status: number } | { code: string }) => {
      if (failureOf(f) === 'refused') this.book.refusedAttempts++;
      else unknown = true;
    };
    try {
      for (let attempt = 0; ; attempt++) {
        let a: Answer;
        try {
          a = await this.timed('update', 'PATCH', `/orders/${o.id}`, headers, body);
        } catch (err) {
          if (!(err instanceof NoAnswer) || attempt > 50) throw err;
          failure(err);
          lost = true;
          await sleep(200);
          continue;
        }
        let now: { note: string; etag: string } | undefined;
        if (a.status === 412) now = await this.readOrder(o.id);
        const outcome = patchOutcome(a.status, lost, now?.note, note);
        if (outcome === 'acked' || outcome === 'applied-on-retry' || outcome === 'applied-before') {
          this.count(outcome);
          if (outcome === 'applied-before' && !unknown) {
            this.book.refusedButApplied++;
            this.anomaly(`order ${o.id}: write ${note} was refused on every failed attempt, yet found applied`);
          }
          return this.applied(o, note, outcome === 'applied-before' ? now!.etag : String(a.headers.etag));
        }
        if (outcome === 'conflict') {
          this.book.conflicts++;
          this.anomaly(`order ${o.id}: 412 on a write with the last acknowledged ETag (note now ${now!.note})`);
          o.etag = now!.etag;
          return;
        }
        if (outcome === 'retry' && attempt < 100) {
          failure(a);
          lost = true; // a 5xx may or may not have applied it: the resend tells
          await sleep(500);
          continue;
        }
        this.anomaly(`order ${o.id}: PATCH answered ${a.status}: ${a.body.slice(0, 200)}`);
        return;
      }
    } finally {
      o.busy = false;
    }
  }

  private count(outcome: 'acked' | 'applied-on-retry' | 'applied-before'): void {
    if (outcome === 'acked') this.book.acked++;
    else if (outcome === 'applied-before') this.book.unackedAppliedBefore++;
    else this.book.unackedAppliedOnRetry++;
  }

  private applied(o: OrderState, note: string, etag: string): void {
    o.rev++;
    o.note = note;
    o.etag = etag;
  }

  private anomaly(s: string): void {
    if (this.book.anomalies.length < 20) this.book.anomalies.push(s);
  }

  private async readOrder(id: number): Promise<{ note: string; etag: string }> {
    for (let attempt = 0; ; attempt++) {
      try {
        const a = await this.send('GET', `/orders/${id}`);
        if (a.status === 200) return { note: String((JSON.parse(a.body) as { note?: string | null }).note), etag: String(a.headers.etag) };
        if (attempt > 20) throw new Error(`GET /orders/${id} answered ${a.status}`);
      } catch (err) {
        if (!(err instanceof NoAnswer) || attempt > 20) throw err;
      }
      await sleep(200);
    }
  }

  private async read(conditional: boolean): Promise<void> {
    const o = this.orders[Math.floor(Math.random() * this.orders.length)];
    const tag = this.seen.get(o.id);
    const a = await this.timed(conditional ? 'conditional' : 'read', 'GET', `/orders/${o.id}`, conditional && tag ? { 'if-none-match': tag } : {});
    if (a.status === 200) this.seen.set(o.id, String(a.headers.etag));
  }

  private async list(): Promise<void> {
    await this.timed('list', 'GET', '/orders?limit=20');
  }

  private async graphql(): Promise<void> {
    const o = this.orders[Math.floor(Math.random() * this.orders.length)];
    await this.timed('graphql', 'POST', '/graphql', { 'content-type': 'application/json' }, JSON.stringify({ query: GQL_ORDER, variables: { id: String(o.id) } }));
  }

  /** Starts the open-loop load at `rates` per second (ticks of 20 ms; a kind with MAX_IN_FLIGHT waiting skips). */
  start(rates: { writes: number; reads: number; lists: number; graphql: number; conditionalShare: number; createShare: number }): void {
    const acc = { update: 0, create: 0, read: 0, conditional: 0, list: 0, graphql: 0 };
    const per: Record<keyof typeof acc, number> = {
      update: rates.writes * (1 - rates.createShare),
      create: rates.writes * rates.createShare,
      read: rates.reads * (1 - rates.conditionalShare),
      conditional: rates.reads * rates.conditionalShare,
      list: rates.lists,
      graphql: rates.graphql,
    };
    let last = Date.now();
    const run = (kind: ReqKind, fn: () => Promise<unknown>) => {
      if (this.inFlight.get(kind)! >= MAX_IN_FLIGHT) return void this.stats.get(kind)!.skipped++;
      this.inFlight.set(kind, this.inFlight.get(kind)! + 1);
      const p = fn()
        .catch((err: unknown) => {
          if (!(err instanceof NoAnswer)) this.anomaly(`${kind}: ${err instanceof Error ? err.message : String(err)}`);
        })
        .finally(() => {
          this.inFlight.set(kind, this.inFlight.get(kind)! - 1);
          this.pending.delete(p);
        });
      this.pending.add(p);
    };
    const tick = () => {
      const now = Date.now();
      const dt = (now - last) / 1000;
      last = now;
      for (const k of Object.keys(acc) as (keyof typeof acc)[]) {
        acc[k] += per[k] * dt;
        for (; acc[k] >= 1; acc[k]--) {
          if (k === 'update') run(k, () => this.update());
          else if (k === 'create') run(k, () => this.create());
          else if (k === 'read' || k === 'conditional') run(k, () => this.read(k === 'conditional'));
          else if (k === 'list') run(k, () => this.list());
          else run(k, () => this.graphql());
        }
      }
    };
    this.timer = setInterval(tick, 20);
  }

  /** Stops issuing requests and waits for those in flight (writes finish their retries). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Every order read back (GraphQL, in batches): revisions and notes as the writes say; each create exactly once. */
  async verify(): Promise<Verified> {
    const wrongState: string[] = [];
    const heads: Record<number, number> = {};
    const expected = new Map<number, { rev: number; note: string }>();
    for (const o of this.orders) expected.set(o.id, { rev: o.rev, note: o.note });
    for (const c of this.creates) if (c.id !== undefined) expected.set(c.id, { rev: 1, note: c.note });
    const ids = [...expected.keys()];
    // One text for every batch, the ids as variables (the last batch repeats its last id):
    // a text per batch would leave the instance judged next with its document cache full
    // of the read-back, which measures that cache's bound rather than what the load left.
    const BATCH = 50;
    const query = `query ReadBack(${Array.from({ length: BATCH }, (_, k) => `$i${k}: ID!`).join(', ')}) { ${Array.from({ length: BATCH }, (_, k) => `o${k}: order(id: $i${k}) { note revision }`).join(' ')} }`;
    for (let i = 0; i < ids.length; i += BATCH) {
      const batch = ids.slice(i, i + BATCH);
      const variables = Object.fromEntries(Array.from({ length: BATCH }, (_, k) => [`i${k}`, String(batch[Math.min(k, batch.length - 1)])]));
      const a = await this.send('POST', '/graphql', { 'content-type': 'application/json' }, JSON.stringify({ query, variables }));
      const data = (JSON.parse(a.body) as { data?: Record<string, { note: string | null; revision: number } | null> }).data ?? {};
      for (const [k, id] of batch.entries()) {
        const got = data[`o${k}`];
        const want = expected.get(id)!;
        if (this.orders.some((o) => o.id === id) && got) heads[id] = got.revision;
        if (!got || got.revision !== want.rev || got.note !== want.note)
          if (wrongState.length < 20) wrongState.push(`order ${id}: ${got ? `revision ${got.revision}, note ${got.note}` : 'missing'}; acknowledged writes say revision ${want.rev}, note ${want.note}`);
      }
    }
    // Each create's note is unique: the account's list must hold it exactly once.
    const count = new Map<string, number>();
    let path: string | undefined = '/orders?limit=100';
    while (path) {
      const a = await this.send('GET', path);
      if (a.status !== 200) throw new Error(`GET ${path} answered ${a.status}`);
      const page = JSON.parse(a.body) as { orders: { note?: string | null }[]; _links: { next?: { href: string } } };
      for (const o of page.orders) if (o.note) count.set(o.note, (count.get(o.note) ?? 0) + 1);
      path = page._links.next?.href;
    }
    const createsNotOnce = this.creates.filter((c) => count.get(c.note) !== 1).map((c) => `create ${c.key}: found ${count.get(c.note) ?? 0} times`);
    return { orders: ids.length, wrongState, createsNotOnce, heads };
  }

  /** p50/p99/max (ms) of a kind. */
  latency(kind: ReqKind): { p50: number; p99: number; max: number } {
    const h = this.stats.get(kind)!.hist;
    return { p50: quantileMs(h, 0.5), p99: quantileMs(h, 0.99), max: quantileMs(h, 1) };
  }

  close(): void {
    for (const a of this.agents) a.destroy();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
