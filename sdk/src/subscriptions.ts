/**
 * GraphQL subscriptions of the contract's operations over graphql-transport-ws (/graphql),
 * typed from the operation, with automatic resume: the client remembers the last `seq`
 * it delivered and, after any drop, subscribes again with `since` = that seq, after
 * base x 2^attempt + random(0, base) (the realtime client's backoff, jitter on the first
 * reconnect too; a refused upgrade's Retry-After waited out as said, as `Reconnects`
 * says). Within the server's replay ring nothing is missed or delivered twice.
 *
 * The rules are the realtime contract's: `subscribed` (the first message) gives the
 * position when the client had none and is not passed on; an event with seq <= last is
 * dropped; `resync` is passed on (query the order, then continue) and its seq adopted.
 *
 * Why not graphql-ws's `createClient`: the SDK ships with client dependencies it already
 * has (graphql-ws is not one), and the protocol's client side used here is five message
 * types (connection_init/ack, subscribe, next/error/complete, ping/pong); resubscribing
 * with a new `since` after each drop is the SDK's own logic either way.
 */
import type { GraphqlErrorJson } from './errors.js';
import { GraphqlRequestError, requestErrorOverWebSocket } from './graphqlErrors.js';
import { baseUrlOf, tokenOf, watchWebSocket, type TokenSource } from './transport.js';
import { persistedOperations, type OperationTypes } from './generated/persisted.js';
import { DEFAULT_BACKOFF, Reconnects, refusalRetryAfter, type Backoff, type WebSocketLike } from './realtime.js';

/** The contract's subscriptions (each resumes with `since` over the replay ring). */
export type SubscriptionName = { [N in keyof OperationTypes]: OperationTypes[N]['kind'] extends 'subscription' ? N : never }[keyof OperationTypes];

/** A WebSocket constructor taking a subprotocol: the platform's, or the `ws` package's in Node 20. */
export type GraphqlWebSocketCtor = new (url: string, protocols: string) => WebSocketLike;

export interface SubscribeOptions {
  baseUrl: string;
  /** A bearer token, or a function returning the current one (read at every connection). */
  token: TokenSource | undefined;
  WebSocket?: GraphqlWebSocketCtor | undefined;
  backoff?: Partial<Backoff> | undefined;
  random?: (() => number) | undefined;
  /** Drop a connection on which nothing arrived for this long and resubscribe (as `streamOrder`'s `idleTimeoutMs`: default 75,000 with the `ws` package, whose pings count; off where pings are not shown; 0: off). */
  idleTimeoutMs?: number | undefined;
}

export interface SubscriptionHandlers<R> {
  /** Each event (and resync) in seq order, exactly once across reconnects. */
  next(data: R): void;
  /** A refusal that resubscribing will not fix (NOT_FOUND, validation, authentication): the subscription stops. */
  error?(error: GraphqlRequestError): void;
  /** Each (re)connection, for tests and UIs. */
  onConnect?(attempt: number): void;
}

export interface GraphqlSubscription {
  /** The last seq delivered (or adopted from `subscribed` / `resync`). */
  readonly lastSeq: number;
  close(): void;
}

const PROTOCOL = 'graphql-transport-ws';
/** Close codes after which reconnecting cannot help: bad token (4403), protocol misuse (4400, 4401, 4406, 4409). */
const FATAL_CLOSES = new Set([4400, 4401, 4403, 4406, 4409]);
/** `extensions.code`s of an `error` message after which subscribing again later can work. */
const RETRYABLE = new Set(['UNAVAILABLE', 'THROTTLED']);

interface StreamEvent {
  seq?: unknown;
  type?: unknown;
}

export function subscribeOperation<N extends SubscriptionName>(
  opts: SubscribeOptions,
  name: N,
  variables: Omit<OperationTypes[N]['variables'], 'since'> & { since?: number | undefined },
  handlers: SubscriptionHandlers<OperationTypes[N]['result']>,
): GraphqlSubscription {
  const op = persistedOperations[name];
  const backoff = { ...DEFAULT_BACKOFF, ...opts.backoff };
  const url = `${baseUrlOf(opts.baseUrl).replace(/^http/, 'ws')}/graphql`;
  const { since, ...rest } = variables;
  let lastSeq = since ?? 0;
  let hasPosition = since !== undefined;
  const reconnects = new Reconnects(backoff, opts.random);
  let closed = false;
  let current: WebSocketLike | undefined;

  function stop(error?: GraphqlRequestError): void {
    closed = true;
    reconnects.cancel();
    current?.close(1000);
    if (error) handlers.error?.(error);
  }

  /** `retryAfterS`: a refused upgrade's Retry-After (the service's accept limiter), waited out as said. */
  function scheduleReconnect(retryAfterS?: number): void {
    if (!closed) reconnects.schedule(retryAfterS, connect);
  }

  /** One `next` payload: the stream's rules, then the handler. */
  function onNext(payload: { data?: Record<string, unknown> | null; errors?: GraphqlErrorJson[] }): void {
    if (!payload.data) return stop(requestErrorOverWebSocket(payload.errors ?? []));
    // A field error in an event (a total `totalCents` cannot hold): as every operation of this
    // client, any error fails it, with the partial data on the error. It would recur on every
    // event of the order, so resubscribing cannot help.
    if (payload.errors?.length) return stop(new GraphqlRequestError(200, payload.errors, { data: payload.data }));
    const event = Object.values(payload.data)[0] as StreamEvent | null | undefined;
    const seq = typeof event?.seq === 'number' ? event.seq : undefined;
    if (seq === undefined) return handlers.next(payload.data as OperationTypes[N]['result']); // a selection without seq: no resume bookkeeping possible
    if (event?.type === 'subscribed') {
      reconnects.reset();
      if (!hasPosition) {
        lastSeq = seq;
        hasPosition = true;
      }
      return;
    }
    if (event?.type === 'resync') {
      lastSeq = seq;
      hasPosition = true;
      return handlers.next(payload.data as OperationTypes[N]['result']);
    }
    if (seq <= lastSeq) return; // replayed, already delivered
    lastSeq = seq;
    hasPosition = true;
    handlers.next(payload.data as OperationTypes[N]['result']);
  }

  function connect(): void {
    if (closed) return;
    handlers.onConnect?.(reconnects.attempt);
    const Ctor = opts.WebSocket ?? (globalThis as { WebSocket?: GraphqlWebSocketCtor }).WebSocket;
    if (!Ctor) return stop(new GraphqlRequestError(0, [{ message: 'no WebSocket: pass options.WebSocket (Node 20: ws)' }], { code: 'UNSUPPORTED_PLATFORM' }));
    const ws = new Ctor(url, PROTOCOL);
    current = ws;
    let retryAfterS: number | undefined;
    // A refused upgrade (503 from the accept limiter, Node's `ws`): keep its Retry-After, then let `ws` abort (onclose follows).
    ws.once?.('unexpected-response', (_req, res) => {
      retryAfterS = refusalRetryAfter(res.statusCode, res.headers['retry-after']);
      ws.close();
    });
    const send = (msg: unknown) => ws.send(JSON.stringify(msg));
    ws.onopen = () => {
      tokenOf(opts.token).then(
        (token) => send({ type: 'connection_init', payload: token ? { authorization: `Bearer ${token}` } : {} }),
        () => ws.close(1000), // the token function failed: resubscribe with backoff
      );
    };
    ws.onmessage = (ev) => {
      idle.alive();
      let msg: { type?: string; id?: string; payload?: unknown };
      try {
        msg = JSON.parse(String(ev.data)) as typeof msg;
      } catch {
        return;
      }
      if (msg.type === 'connection_ack') {
        send({ id: '1', type: 'subscribe', payload: { query: op.text, operationName: name, variables: { ...rest, ...(hasPosition ? { since: lastSeq } : {}) } } });
      } else if (msg.type === 'ping') {
        send({ type: 'pong' });
      } else if (msg.type === 'next' && msg.id === '1') {
        onNext(msg.payload as { data?: Record<string, unknown> | null; errors?: GraphqlErrorJson[] });
      } else if (msg.type === 'error' && msg.id === '1') {
        const errors = Array.isArray(msg.payload) ? (msg.payload as GraphqlErrorJson[]) : [];
        const error = requestErrorOverWebSocket(errors);
        if (RETRYABLE.has(String(error.code))) {
          // THROTTLED says when the cost budget has room again: waited out as a refused upgrade's Retry-After is.
          retryAfterS = Number(errors[0]?.extensions?.retryAfterSeconds) || undefined;
          ws.close(1000); // onclose resubscribes after it, or with backoff
        } else stop(error);
      } else if (msg.type === 'complete' && msg.id === '1') {
        ws.close(1000); // the server ended it: resume on a new connection
      }
    };
    const idle = watchWebSocket(ws, opts.idleTimeoutMs, (ev) => {
      if (current !== ws || closed) return;
      // 4403 is the server refusing the token: HTTP's 401 on every transport (the README's rule), not a network failure's 0.
      if (FATAL_CLOSES.has(ev.code))
        return stop(new GraphqlRequestError(ev.code === 4403 ? 401 : 400, [{ message: `closed ${ev.code}: ${ev.reason}`, extensions: { code: ev.code === 4403 ? 'UNAUTHENTICATED' : 'BAD_REQUEST' } }]));
      scheduleReconnect(retryAfterS);
    });
  }

  connect();
  return {
    get lastSeq() {
      return lastSeq;
    },
    close: () => stop(),
  };
}
