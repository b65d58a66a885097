/**
 * SSE: `GET /api/orders/{id}/stream`. `retry:` once, then the replay after
 * Last-Event-ID (or one `resync`), then live events; a comment heartbeat every 15 s
 * from one shared timer (no timer per connection). The server ends a stream only on
 * shutdown or backpressure. Errors before the stream starts are problem+json.
 */
import type { ServerResponse } from 'node:http';
import type { Context, Middleware } from 'koa';
import type { Account, Store } from '../store';
import { httpProblem } from '../http';
import type { AcceptLimiter } from './acceptLimiter';
import { resyncMessage, sseFrame, type Frame } from './frames';
import type { Subscriber, TopicHub } from './hub';

export const SSE_PATH = /^\/api\/orders\/([^/]+)\/stream$/;
const ORDER_ID = /^[1-9][0-9]{0,14}$/;
const SEQ = /^(0|[1-9][0-9]{0,14})$/;
export const SSE_RETRY_MS = 2000;
export const HEARTBEAT_MS = 15_000;

export interface SseDeps {
  store: Pick<Store, 'getOrder'>;
  hub: TopicHub;
  limiter: AcceptLimiter;
  /** Bearer header or `access_token` (EventSource cannot send headers). */
  authenticate: (ctx: Context) => Promise<Account>;
  maxBufferBytes: number;
  onBackpressure?: () => void;
}

export class SseStreams {
  readonly open = new Set<ServerResponse>();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(heartbeatMs = HEARTBEAT_MS) {
    this.heartbeat = setInterval(() => {
      for (const res of this.open) res.write(': ping\n\n');
    }, heartbeatMs);
    this.heartbeat.unref();
  }

  /** Cuts every stream as a network failure would (tests, and operators shedding load). */
  dropAll(): void {
    for (const res of this.open) res.destroy();
  }

  /** Shutdown: tell every client to come back (retry:) and end its stream. */
  close(): void {
    clearInterval(this.heartbeat);
    for (const res of this.open) res.end(`retry: ${SSE_RETRY_MS}\n\n`);
    this.open.clear();
  }
}

export function sseMiddleware(deps: SseDeps, streams: SseStreams): Middleware {
  return async function sse(ctx, next) {
    const m = SSE_PATH.exec(ctx.path);
    if (!m) return next();
    ctx.state.route = '/api/orders/{orderId}/stream';
    if (ctx.method !== 'GET') throw httpProblem('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed here`, { Allow: 'GET' });
    const account = await deps.authenticate(ctx);
    if (!ORDER_ID.test(m[1])) throw httpProblem('NOT_FOUND', 'No such order');
    const orderId = Number(m[1]);
    const order = await deps.store.getOrder(account.id, orderId);
    if (!order) throw httpProblem('NOT_FOUND', 'No such order');
    const lastEventId = ctx.get('last-event-id') || undefined;
    if (lastEventId !== undefined && !SEQ.test(lastEventId.trim())) throw httpProblem('BAD_REQUEST', 'Last-Event-ID must be a non-negative integer');
    const admitted = deps.limiter.take();
    if (!admitted.ok) {
      throw httpProblem('SERVICE_UNAVAILABLE', 'Too many new connections: retry later', { 'Retry-After': String(admitted.retryAfterS) });
    }

    const res = ctx.res;
    ctx.respond = false; // Koa lets go: this response is a stream we write ourselves
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': ctx.response.get('x-request-id'),
    });
    res.write(`retry: ${SSE_RETRY_MS}\n\n`);
    streams.open.add(res);

    let closed = false;
    const end = () => {
      if (closed) return;
      closed = true;
      streams.open.delete(res);
      deps.hub.unsubscribe(orderId, sub);
      res.end();
    };
    const write = (bytes: Buffer) => {
      if (closed) return;
      res.write(bytes);
      if (res.writableLength > deps.maxBufferBytes) {
        deps.onBackpressure?.();
        end(); // the client reconnects with Last-Event-ID and is replayed what it missed
      }
    };
    const sub: Subscriber = {
      lastSeq: 0,
      ack: () => undefined,
      write: (frame: Frame) => write(frame.sse),
      resync: (seq) => write(sseFrame(resyncMessage(orderId, seq), seq)),
      drop: () => end(),
    };
    ctx.req.once('close', end);
    await deps.hub.subscribe(orderId, lastEventId === undefined ? undefined : Number(lastEventId), sub, order.revision);
  };
}
