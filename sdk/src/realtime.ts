/**
 * The realtime client: one order's stream over WebSocket or SSE, in Node and in
 * browsers, typed by the messages generated from the AsyncAPI contract.
 *
 * - Reconnects after any drop with delay = base x 2^attempt + random(0, base), capped:
 *   the jitter applies to the first reconnect too, so a fleet dropped at once does not
 *   come back at once; a 503's or 429's Retry-After is waited out as said, up to
 *   `SCHEDULED_REFUSALS` times in a row (SSE, and WebSocket with Node's `ws`, which shows the
 *   refused upgrade's headers: `Reconnects`).
 * - Follows the contract's wire rule (the service's `/asyncapi.yaml`) and nothing else: it keeps the last
 *   seq of its topic; an event with seq = last + 1 is delivered, seq <= last dropped,
 *   seq > last + 1 is a gap (GET the order); a `resync` means GET the order and continue
 *   from the resync's seq (adopted even when lower: the client's position was ahead of
 *   the topic). `subscribed.seq` is the resume point: adopted only when it had none.
 * - Resumes from the last seq it delivered (WebSocket `since`, SSE `Last-Event-ID`), so
 *   within the server's replay ring nothing is missed or repeated.
 *
 * SSE is read with fetch streaming (not EventSource) so the same code sends the bearer
 * header in Node and in browsers, and parsed with eventsource-parser (the event stream
 * format's line rules: CR/LF variants, multi-line data, comments, BOM). WebSocket takes
 * a constructor (the `ws` package in Node 20, the platform's in browsers and Node 22)
 * and authenticates with `access_token`.
 *
 * @packageDocumentation
 */
import { createParser } from 'eventsource-parser';
import type {
  ErrorMessage as GeneratedErrorMessage,
  OrderEventMessage as GeneratedEventMessage,
  ResyncMessage as GeneratedResyncMessage,
  ResyncMessageReason,
  ServerMessage as GeneratedServerMessage,
} from './generated/messages.js';
import { OrderlineError, errorFromResponse, MAX_RETRY_AFTER_S, parseRetryAfter, type RealtimeErrorCode } from './errors.js';

export { MAX_RETRY_AFTER_S, parseRetryAfter };
// Every failure of this entry is an OrderlineError: importable from here as from the others.
export { OrderlineError };
export type { OrderlineErrorCode, RealtimeErrorCode } from './errors.js';
import type { Order, OrderStatus } from './orders.js';
import { baseUrlOf, idleWatch, SSE_IDLE_TIMEOUT_MS, tokenOf, watchWebSocket, type TokenSource } from './transport.js';

/** An event on an order's topic: the order as it stands after the write (the same `Order` the REST client reads). */
export interface OrderEventMessage extends Omit<GeneratedEventMessage, 'order' | 'status'> {
  order: Order;
  status: OrderStatus;
}
/** A refused client message or subscription; `code` lists the codes sent today and takes any other. */
export interface ErrorMessage extends Omit<GeneratedErrorMessage, 'code'> {
  code: RealtimeErrorCode;
}
/** The resume point was outside the replay ring; `reason` lists the reasons sent today and takes any other. */
export interface ResyncMessage extends Omit<GeneratedResyncMessage, 'reason'> {
  reason: ResyncMessageReason;
}
export type { ResyncMessageReason };
/** Messages the server sends on a stream (the service's `/asyncapi.yaml`), events typed with `Order`, open sets named. */
export type ServerMessage = Exclude<GeneratedServerMessage, GeneratedEventMessage | GeneratedErrorMessage | GeneratedResyncMessage> | OrderEventMessage | ErrorMessage | ResyncMessage;

/** @deprecated the same type as `Order`. */
export type OrderV2 = Order;

export interface Backoff {
  baseMs: number;
  capMs: number;
}
export const DEFAULT_BACKOFF: Backoff = { baseMs: 500, capMs: 30_000 };

/** base x 2^attempt + random(0, base), at most cap; attempt 0 is the first reconnect. */
export function reconnectDelay(attempt: number, b: Backoff = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  return Math.min(b.capMs, b.baseMs * 2 ** attempt + random() * b.baseMs);
}

/** The statuses whose `Retry-After` schedules the next attempt: 503 (the service cannot take it now) and 429 (too many requests). */
const SCHEDULING_STATUSES = new Set([429, 503]);

/** The Retry-After of a refused connection (seconds), when its status is one that schedules the next attempt. */
export function refusalRetryAfter(status: number | undefined, header: string | readonly string[] | null | undefined): number | undefined {
  if (status === undefined || !SCHEDULING_STATUSES.has(status)) return undefined;
  return parseRetryAfter(typeof header === 'string' || header == null ? header : header[0]);
}

/**
 * The backoff, or, when the server said `Retry-After` and that is longer, that many
 * seconds plus random(0, 1 s).
 */
export function retryDelay(attempt: number, retryAfterS: number | undefined, b: Backoff = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const backoff = reconnectDelay(attempt, b, random);
  return retryAfterS === undefined || retryAfterS <= 0 ? backoff : Math.max(backoff, (retryAfterS + random()) * 1000);
}

/**
 * Refusals with `Retry-After` since the last connection that worked that are waited out as
 * said; from the next one on, the backoff applies as well (`Reconnects`).
 */
export const SCHEDULED_REFUSALS = 4;

/**
 * When to connect again, for one stream (`streamOrder`, GraphQL `subscribe`; the service's
 * benchmark clients use it too):
 *
 * - after a drop, or a failure that says nothing (connection refused or reset, an error
 *   status without `Retry-After`): the backoff, base x 2^attempt + random(0, base), and
 *   the attempt counts;
 * - after a refusal with `Retry-After` (503 or 429: `refusalRetryAfter`): that many
 *   seconds plus random(0, 1 s), whatever the backoff, and it does not count. orderline's
 *   accept limiter gives each refused client the second it keeps a place for it (from its
 *   queue and its rate), so a reconnect storm is spread over the seconds it needs; a client
 *   that waited out a longer backoff instead (grown by a restart's closed port, or by
 *   earlier refusals) missed its place, was refused again and came last: in a simulated
 *   storm of 10,000 clients after a restart, 59 s for the last one instead of 24 s;
 * - but only `SCHEDULED_REFUSALS` of those since the last connection that worked: a server
 *   that keeps refusing (an outage answering "1 s" every time) is then backed off from,
 *   the longer of the backoff and `Retry-After`, and each refusal counts.
 *
 * No wait is longer than `MAX_RETRY_AFTER_S`.
 */
export class Reconnects {
  private count = 0;
  private scheduled = 0;

  constructor(
    private readonly backoff: Backoff = DEFAULT_BACKOFF,
    private readonly random: () => number = Math.random,
  ) {}

  /** Attempts counted since the last connection that worked (the backoff's exponent). */
  get attempt(): number {
    return this.count;
  }

  /** The wait (ms) before the next attempt, once this one ended: `retryAfterS` from a refusal (`refusalRetryAfter`), else undefined. */
  next(retryAfterS: number | undefined): number {
    let delay: number;
    if (retryAfterS !== undefined && retryAfterS > 0 && this.scheduled < SCHEDULED_REFUSALS) {
      this.scheduled++;
      delay = (retryAfterS + this.random()) * 1000;
    } else {
      delay = retryDelay(this.count, retryAfterS, this.backoff, this.random);
      this.count++;
    }
    return Math.min(MAX_RETRY_AFTER_S * 1000, delay);
  }

  private timer: ReturnType<typeof setTimeout> | undefined;

  /** Calls `connect` after `next(retryAfterS)` ms, unless a call is already scheduled. */
  schedule(retryAfterS: number | undefined, connect: () => void): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      connect();
    }, this.next(retryAfterS));
  }

  /** Drops the scheduled call (the stream was closed). */
  cancel(): void {
    clearTimeout(this.timer);
  }

  /** A connection that worked (subscribed): the counts start again. */
  reset(): void {
    this.count = 0;
    this.scheduled = 0;
  }
}

/**
 * An event handler checked bivariantly (the `bivarianceHack` of React's and the DOM's
 * typings): the DOM's `WebSocket` hands a `MessageEvent`, `ws` its own `MessageEvent`,
 * and each declares its handler with its own event type. A plain function-typed
 * property is contravariant under strictFunctionTypes, so no single parameter type
 * would admit both; a method-derived one accepts either, as long as the event offers
 * what this client reads.
 */
type Handler<E> = { bivarianceHack(event: E): void }['bivarianceHack'] | null;

/**
 * What this client uses of a WebSocket: the platform's (browsers, Node 22) and the `ws`
 * package's both satisfy it as they are, so neither needs a cast.
 */
export interface WebSocketLike {
  readonly readyState: number;
  onopen: Handler<unknown>;
  onmessage: Handler<{ data: unknown }>;
  onclose: Handler<{ code: number; reason: string }>;
  onerror: Handler<unknown>;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  /**
   * Node's `ws` package only: the response to a refused upgrade, so its `Retry-After`
   * is honoured (browsers do not show it to scripts; there the backoff alone applies).
   */
  once?(event: 'unexpected-response', listener: (request: unknown, response: { statusCode?: number; headers: { 'retry-after'?: string | string[]; 'x-request-id'?: string | string[] } }) => void): unknown;
  /** Node's `ws` package only: the server's ping frames, which prove the connection alive (browsers answer them unseen). */
  on?(event: 'ping', listener: () => void): unknown;
  /** Node's `ws` package only: drops the connection at once, without a closing handshake a gone peer would never answer. */
  terminate?(): void;
}
export type WebSocketCtor = new (url: string) => WebSocketLike;

export interface OrderStreamOptions {
  baseUrl: string;
  /**
   * A bearer token, or a function returning the current one: called at every
   * (re)connection and resync, so a rotated token is picked up at the next reconnect.
   */
  token?: TokenSource | undefined;
  orderId: number;
  transport: 'ws' | 'sse';
  /** Resume after this seq (0: seen nothing, replay from seq 1; absent: live from now). */
  since?: number | undefined;
  onEvent(message: OrderEventMessage): void;
  /** The stream could not be resumed gap-free: here is the order as it stands now. */
  onResync?(order: OrderV2): void;
  /**
   * A refusal that retrying will not fix (400, 401, 403, 404): the stream stops. The error has
   * the status, the code (REST problem code over SSE and the resync GET, the WebSocket
   * `error` message's code) and the request id when there was an HTTP answer.
   */
  onFatal?(error: OrderlineError): void;
  /**
   * Each (re)connection attempt, as it starts (`attempt`: the reconnects since the last one that
   * worked): not a sign that it succeeded. A connection works once `onEvent` or `onResync` is
   * called on it; a refusal is retried (or, when retrying cannot fix it, `onFatal`).
   */
  onConnect?(attempt: number): void;
  /**
   * Drop the connection and resume on a new one (from the last seq) when nothing has
   * arrived on it for this many ms: a server or network gone without closing it (a
   * suspended laptop, a NAT entry expired) sends no close, and a quiet order sends no
   * events either. What counts as arriving: over SSE any bytes, the server's `: ping`
   * comments included (every 15 s by default, `SSE_HEARTBEAT_S`); over WebSocket any
   * message and, with the `ws` package, the server's ping frames (every 30 s by default,
   * `WS_HEARTBEAT_S`). Default: 45,000 over SSE, 75,000 over WebSocket with `ws`; off
   * for a WebSocket that does not show pings (browsers, Node 22's), where a quiet order
   * would look dead. Keep it above the server's heartbeat; 0: off.
   */
  idleTimeoutMs?: number | undefined;
  backoff?: Partial<Backoff> | undefined;
  random?: (() => number) | undefined;
  WebSocket?: WebSocketCtor | undefined;
  fetch?: typeof fetch | undefined;
  /** Aborting it closes the stream, as `close()` does. */
  signal?: AbortSignal | undefined;
}

export interface OrderStream {
  readonly lastSeq: number;
  close(): void;
}

const FATAL_STATUSES = new Set([400, 401, 403, 404]);
/** The problem code the service sends with each fatal upgrade refusal (the body of ws's unexpected response is not read). */
const UPGRADE_CODES: Readonly<Record<number, string>> = { 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 404: 'NOT_FOUND' };

export { SSE_IDLE_TIMEOUT_MS, WS_IDLE_TIMEOUT_MS } from './transport.js';

/** Whether a failure stops the stream (onFatal) rather than dropping one connection. */
const isFatal = (err: unknown): err is OrderlineError => err instanceof OrderlineError && (FATAL_STATUSES.has(err.status) || err.code === 'UNSUPPORTED_PLATFORM');

export function streamOrder(opts: OrderStreamOptions): OrderStream {
  const doFetch = opts.fetch ?? fetch;
  const backoff = { ...DEFAULT_BACKOFF, ...opts.backoff };
  const base = baseUrlOf(opts.baseUrl);
  const streamUrl = `${base}/api/orders/${opts.orderId}/stream`;
  const channel = `order:${opts.orderId}`;
  let lastSeq = opts.since ?? 0;
  // Whether lastSeq is a real position (given, or learnt from the server); without one
  // the first connection is live-only and sends no since / Last-Event-ID.
  let hasPosition = opts.since !== undefined;
  const reconnects = new Reconnects(backoff, opts.random);
  let closed = false;
  let stopCurrent: () => void = () => undefined;
  // Messages are handled one at a time: a resync's GET must finish before the next event.
  let chain: Promise<void> = Promise.resolve();

  async function authHeaders(): Promise<Record<string, string>> {
    const token = await tokenOf(opts.token);
    return token ? { authorization: `Bearer ${token}` } : {};
  }

  /** GETs the order; `adopt`: the resync's seq, the position the stream continues from. */
  async function resync(adopt?: number): Promise<void> {
    const res = await doFetch(`${base}/v2/orders/${opts.orderId}`, { headers: await authHeaders() });
    if (!res.ok) throw await errorFromResponse(res, 'realtime');
    const order = (await res.json()) as Order;
    // v2 carries no revision field; orderline's ETag does ("<id>-<revision>-v<version>..."), and it is the topic's seq.
    const revision = Number(/-(\d+)-v/.exec(res.headers.get('etag') ?? '')?.[1] ?? NaN);
    // The GET may already include events after the resync's seq: continue after whichever is newer.
    const from = adopt ?? lastSeq;
    lastSeq = Number.isInteger(revision) ? Math.max(from, revision) : from;
    hasPosition = true;
    opts.onResync?.(order);
  }

  async function handle(msg: ServerMessage): Promise<void> {
    if (msg.type === 'subscribed') {
      reconnects.reset();
      // The resume point: our own since back, or (live-only) the head we start from.
      if (!hasPosition) {
        lastSeq = msg.seq;
        hasPosition = true;
      }
      return;
    }
    if (msg.type === 'resync') return resync(msg.seq);
    if (msg.type === 'error') {
      // No such order (404), or a subscribe refused as malformed (400: an order id or since no order can have): sending it again cannot help.
      if (msg.code === 'not_found' || msg.code === 'invalid_message') {
        throw new OrderlineError(msg.code === 'not_found' ? 404 : 400, undefined, { source: 'realtime', code: msg.code, message: `${msg.channel}: ${msg.message}` });
      }
      // The topic could not be loaded: no subscription exists; reconnect with backoff and subscribe again.
      if (msg.code === 'unavailable') throw new Error(`${msg.channel}: ${msg.message}`);
      return;
    }
    if (msg.type !== 'order.created' && msg.type !== 'order.updated' && msg.type !== 'order.cancelled') return;
    if (!hasPosition) {
      // A server that sends no `subscribed` on SSE (orderline before it did): the first live event starts the stream.
      lastSeq = msg.seq - 1;
      hasPosition = true;
    }
    if (msg.seq <= lastSeq) return; // already delivered (a replay overlapping what we have)
    if (msg.seq !== lastSeq + 1) {
      await resync(); // a jump: never skip silently
      if (msg.seq <= lastSeq) return;
    }
    lastSeq = msg.seq;
    opts.onEvent(msg);
  }

  const enqueue = (msg: ServerMessage) => {
    chain = chain.then(() => handle(msg)).catch((err) => fail(err));
  };

  function fail(err: unknown): void {
    if (isFatal(err)) {
      closed = true;
      stopCurrent();
      opts.onFatal?.(err);
    } else {
      stopCurrent(); // anything else: drop this connection and resume on a new one
    }
  }

  function scheduleReconnect(retryAfterS?: number): void {
    if (!closed) reconnects.schedule(retryAfterS, connect);
  }

  async function connectWs(): Promise<void> {
    const Ctor = opts.WebSocket ?? (globalThis as { WebSocket?: WebSocketCtor }).WebSocket;
    if (!Ctor) throw new OrderlineError(0, undefined, { source: 'client', code: 'UNSUPPORTED_PLATFORM', message: 'no WebSocket: pass options.WebSocket (Node 20: ws)' });
    const token = await tokenOf(opts.token);
    if (closed) return;
    const url = `${base.replace(/^http/, 'ws')}/orders${token ? `?access_token=${encodeURIComponent(token)}` : ''}`;
    const ws = new Ctor(url);
    let done = false;
    let retryAfterS: number | undefined;
    const finish = () => {
      if (done) return;
      done = true;
      scheduleReconnect(retryAfterS);
    };
    // A refused upgrade (503 from the accept limiter): keep its Retry-After, then let `ws` abort (its close follows).
    ws.once?.('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      // A refusal retrying cannot fix (400, 401, 403, 404), as on SSE: the stream stops and onFatal is told.
      if (FATAL_STATUSES.has(status)) {
        done = true; // no reconnect when the socket closes
        const sent = res.headers['x-request-id'];
        const requestId = Array.isArray(sent) ? sent[0] : sent;
        fail(new OrderlineError(status, undefined, { source: 'realtime', code: UPGRADE_CODES[status], message: `WebSocket upgrade refused: HTTP ${status}`, requestId }));
        ws.close();
        return;
      }
      retryAfterS = refusalRetryAfter(status, res.headers['retry-after']);
      ws.close();
    });
    stopCurrent = () => ws.close();
    /**
     * A browser's WebSocket shows a refused upgrade as a close, without its status: after one,
     * the same check is asked of the stream's SSE URL (HEAD, same token, same refusals), and a
     * refusal retrying cannot fix (400, 401, 403, 404) stops the stream, as it does in Node.
     */
    let opened = false;
    ws.onopen = () => {
      opened = true;
      ws.send(JSON.stringify({ type: 'subscribe', channel, ...(hasPosition ? { since: lastSeq } : {}) }));
    };
    ws.onmessage = (ev) => {
      idle.alive();
      try {
        enqueue(JSON.parse(String(ev.data)) as ServerMessage);
      } catch {
        // not JSON: ignore
      }
    };
    const idle = watchWebSocket(ws, opts.idleTimeoutMs, () => {
      if (opened || ws.once) return void chain.then(finish, finish);
      void authHeaders()
        .then((headers) => doFetch(streamUrl, { method: 'HEAD', headers, signal: AbortSignal.timeout(10_000) }))
        .then(async (res) => {
          // fail() stops the stream (no reconnect follows) for a refusal retrying cannot fix.
          if (!closed && FATAL_STATUSES.has(res.status)) fail(await errorFromResponse(res, 'realtime'));
          finish();
        })
        .catch(finish); // no answer either: an outage, retried as one
    });
  }

  function connectSse(): void {
    const abort = new AbortController();
    stopCurrent = () => abort.abort();
    // From the request on: a server that accepts the connection and never answers is as gone.
    const idle = idleWatch(opts.idleTimeoutMs ?? SSE_IDLE_TIMEOUT_MS, () => abort.abort());
    void (async () => {
      let retryAfterS: number | undefined;
      try {
        const headers: Record<string, string> = { ...(await authHeaders()), accept: 'text/event-stream' };
        if (hasPosition) headers['last-event-id'] = String(lastSeq);
        const res = await doFetch(streamUrl, { headers, signal: abort.signal });
        if (!res.ok) {
          retryAfterS = refusalRetryAfter(res.status, res.headers.get('retry-after'));
          throw await errorFromResponse(res, 'realtime');
        }
        if (!res.body) throw new Error(`stream: HTTP ${res.status} without a body`);
        idle.alive();
        reconnects.reset();
        const parser = createParser({
          onEvent: (ev) => {
            if (ev.data) enqueue(JSON.parse(ev.data) as ServerMessage);
          },
        });
        const reader = (res.body as ReadableStream<Uint8Array>).getReader();
        const decoder = new TextDecoder();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          idle.alive();
          parser.feed(decoder.decode(value, { stream: true }));
        }
      } catch (err) {
        if (isFatal(err)) return fail(err);
      } finally {
        idle.stop();
      }
      await chain.catch(() => undefined);
      scheduleReconnect(retryAfterS);
    })();
  }

  function connect(): void {
    if (closed) return;
    opts.onConnect?.(reconnects.attempt);
    if (opts.transport === 'ws') connectWs().catch((err: unknown) => (isFatal(err) ? fail(err) : scheduleReconnect()));
    else connectSse();
  }

  function close(): void {
    closed = true;
    reconnects.cancel();
    stopCurrent();
  }

  if (opts.signal?.aborted) closed = true;
  opts.signal?.addEventListener('abort', close, { once: true });
  connect();
  return {
    get lastSeq() {
      return lastSeq;
    },
    close,
  };
}
