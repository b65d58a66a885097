/**
 * What every client of the SDK shares on the way to the network: the bearer token (a
 * fixed string or a function asked before each request and each reconnect, so a
 * rotated token is picked up), cancellation (`AbortSignal`) and timeouts, and safe
 * retries.
 *
 * Retries: a request is retried only when repeating it cannot do harm, and only when the
 * answer was lost (network error) or says "not now" (429, 503, and 409
 * IDEMPOTENCY_KEY_IN_USE for a keyed request), after `Retry-After` (capped) or else
 * exponential backoff with jitter:
 * - GET and HEAD (safe);
 * - `POST /orders` (any version) and a write carrying `If-Match` (PUT, PATCH, cancel),
 *   sent with an `Idempotency-Key` (a random UUID unless the caller set one): the server
 *   replays the first outcome, so a retry never creates a second order, and a write whose
 *   answer was lost gets that answer, not the 412 its own applied write would cause (which
 *   `updateOrder` would take for another client's write and apply the change again).
 *   `If-Match` alone makes a write apply at most once; a server before contract 3.3.0
 *   ignores the key on PUT and PATCH.
 * An aborted request is never retried: it fails at once with the signal's reason.
 */
import { OrderlineError, errorFromResponse, retryAfterMs } from './errors.js';
import type { WebSocketLike } from './realtime.js';

/**
 * A client's `baseUrl` as every client joins paths to it: without its trailing slashes (a path
 * prefix is kept). One that is no http(s) URL (`localhost:3000`, a typo) throws a TypeError
 * when the client is made, rather than at each call; a page may give a path (`/api`),
 * resolved against its own URL.
 */
export function baseUrlOf(baseUrl: string): string {
  const base = `${baseUrl}`.trim().replace(/\/+$/, '');
  // No URL at all: the URL constructor's own TypeError (Invalid URL).
  if (!/^https?:$/.test(new URL(base, (globalThis as { location?: { href: string } }).location?.href).protocol)) throw new TypeError(`baseUrl ${baseUrl} is no http(s) URL`);
  return base;
}

/** A bearer token, or a function returning the current one (called before every request and every stream reconnect). */
export type TokenSource = string | (() => string | undefined | Promise<string | undefined>);

export async function tokenOf(source: TokenSource | undefined): Promise<string | undefined> {
  return typeof source === 'function' ? await source() : source;
}

/**
 * A random v4 UUID. `crypto.randomUUID` exists only in secure contexts (https, localhost);
 * `crypto.getRandomValues` everywhere, so the same key is built from it on a plain-http page.
 */
export function randomUuid(): string {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Whether `timeoutMs` sets a timeout (see withTimeout). */
export const timed = (timeoutMs: number | undefined): timeoutMs is number => timeoutMs !== undefined && timeoutMs > 0 && timeoutMs < 2 ** 31;

/**
 * A signal that aborts when `signal` does, or with an OrderlineError TIMEOUT after
 * `timeoutMs`. (AbortSignal.any and AbortSignal.timeout would do it, but `any` needs
 * Node 20.3 and `timeout`'s reason is a DOMException without our status and code.)
 * No timeout unless `timeoutMs` is a number of ms a timer can wait: 0, a negative, NaN or
 * 2^31 and above (which timers would fire at once) mean none, as 0 does in most HTTP clients.
 */
export function withTimeout(signal: AbortSignal | null | undefined, timeoutMs: number | undefined): { signal: AbortSignal | undefined; done(): void } {
  if (!timed(timeoutMs)) return { signal: signal ?? undefined, done: () => undefined };
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal!.reason);
  if (signal?.aborted) controller.abort(signal.reason);
  else signal?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => controller.abort(new OrderlineError(0, undefined, { source: 'client', code: 'TIMEOUT', message: `no answer within ${timeoutMs} ms` })), timeoutMs);
  return {
    signal: controller.signal,
    done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}

/** The fetch openapi-fetch calls: one Request in, one Response out. */
export type RequestFetch = (input: Request) => Promise<Response>;

export interface RetryOptions {
  /** Attempts in all, the first included (default 3; 1 turns retries off). */
  attempts?: number | undefined;
  /** Longest wait between attempts, ms (default 5000): an answer whose `Retry-After` asks for longer is returned at once. */
  maxDelayMs?: number | undefined;
  /** For tests. */
  sleep?: ((ms: number, signal?: AbortSignal | null) => Promise<void>) | undefined;
}

/** A create (any version); a cancel carries If-Match. */
const KEYED = /\/(v\d+\/)?orders$/;
const RETRY_STATUSES = new Set([409, 429, 503]);

/** Whether repeating `request` is harmless, and whether it needs an Idempotency-Key for that. */
function retryKind(request: Request): 'safe' | 'keyed' | undefined {
  if (request.method === 'GET' || request.method === 'HEAD') return 'safe';
  if (request.headers.has('if-match') || (request.method === 'POST' && KEYED.test(new URL(request.url).pathname))) return 'keyed';
  return undefined;
}

/**
 * A fetch that retries what is safe to retry, on a network error, 429 or 503 (and 409
 * IDEMPOTENCY_KEY_IN_USE for a keyed request), after `Retry-After` or a jittered backoff: GET
 * and HEAD; creates and writes carrying `If-Match`, sent with an `Idempotency-Key` (a random
 * UUID unless the request has one), so the server replays the first outcome. Anything else
 * goes through once; an aborted request is never retried.
 */
export function retryFetch(inner: RequestFetch, options: RetryOptions = {}): RequestFetch {
  const { attempts = 3, maxDelayMs = 5000, sleep: wait = sleep } = options;
  return async (request) => {
    request.signal.throwIfAborted();
    const kind = retryKind(request);
    if (!kind || attempts <= 1) return inner(request);
    if (kind === 'keyed' && !request.headers.has('idempotency-key')) request.headers.set('idempotency-key', randomUuid());
    for (let attempt = 1; ; attempt++) {
      request.signal.throwIfAborted();
      let res: Response | undefined;
      try {
        res = await inner(request.clone());
      } catch (err) {
        if (request.signal.aborted || attempt >= attempts) throw err;
      }
      if (res) {
        if (!RETRY_STATUSES.has(res.status) || attempt >= attempts) return res;
        // 409 is final unless it is the keyed request's "still running" (a domain conflict otherwise).
        if (res.status === 409 && (kind !== 'keyed' || (await errorFromResponse(res)).code !== 'IDEMPOTENCY_KEY_IN_USE')) return res;
      }
      const after = res ? retryAfterMs(res.headers.get('retry-after')) : undefined;
      // Asked to wait longer than the cap: a retry sooner is refused again, so the answer is yours now.
      if (res && (after ?? 0) > maxDelayMs) return res;
      await wait(Math.min(maxDelayMs, after ?? 200 * 2 ** attempt) + Math.random() * 100, request.signal);
    }
  };
}

/** A timer pushed back by every sign of life; `onIdle` when none came for `ms` (0: never). */
export function idleWatch(ms: number, onIdle: () => void): { alive: () => void; stop: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => clearTimeout(timer);
  const alive = () => {
    stop();
    if (ms > 0) timer = setTimeout(onIdle, ms);
  };
  alive();
  return { alive, stop };
}

/** Defaults of `idleTimeoutMs`: three of the server's default SSE heartbeats, two and a half of its WebSocket pings. */
export const SSE_IDLE_TIMEOUT_MS = 45_000;
export const WS_IDLE_TIMEOUT_MS = 75_000;

/**
 * The watch of one WebSocket (order streams and GraphQL subscriptions alike): its end and
 * its silence.
 *
 * `onClose` runs once, when the socket closes, or, when a failed connection fires only
 * `error`, for that error, as a close with code 1006 (closed abnormally, RFC 6455 7.1.5).
 * The WHATWG WebSocket fires `close` right after `error`, in the same task, and so do
 * browsers and the `ws` package; Node 22's built-in one (undici 6) fires only `error` when
 * a connection cannot be opened (a refused upgrade, no server: nodejs/undici#3546), and a
 * stream that waited for `close` there would stop for good.
 *
 * Silence: the server's pings count as life where the socket shows them (the `ws`
 * package), and only there is silence a sign of a dead connection by default (elsewhere a
 * quiet stream would look dead). An idle one is cut at once (`terminate`) where it can be,
 * rather than waiting for a closing handshake a gone peer never answers. Messages call `alive`.
 */
export function watchWebSocket(
  ws: Pick<WebSocketLike, 'on' | 'terminate' | 'close' | 'onclose' | 'onerror'>,
  idleTimeoutMs: number | undefined,
  onClose: (ev: { code: number; reason: string }) => void,
): { alive: () => void } {
  const idle = idleWatch(idleTimeoutMs ?? (ws.on ? WS_IDLE_TIMEOUT_MS : 0), () => (ws.terminate ? ws.terminate() : ws.close()));
  ws.on?.('ping', idle.alive);
  // Cleared when it runs, so the error's late stand-in finds nothing. `onerror` stays set: the
  // `ws` package throws an `error` event no listener takes.
  ws.onclose = (ev) => {
    ws.onclose = null;
    idle.stop();
    onClose(ev);
  };
  ws.onerror = () => void setTimeout(() => ws.onclose?.({ code: 1006, reason: '' }));
  return idle;
}
