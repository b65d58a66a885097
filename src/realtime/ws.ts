/**
 * WebSocket: `/orders?since=<seq>` via `ws`. The upgrade is authenticated (bearer
 * header or `access_token`) and admitted by the accept limiter before `ws` takes the
 * socket; refusals are plain HTTP problem+json answers on the socket (401, 400, 404,
 * 503 with Retry-After). Client messages are checked with the validators generated
 * from the AsyncAPI contract; a bad one gets an `error` message and the connection
 * stays open. Every server message is a pre-framed text frame (events: the hub's shared
 * bytes) written through the connection's bounded queue (writer.ts); ws itself writes
 * only control frames (pong, close), and the queue is stopped before any close, so no
 * data frame ever follows a close frame.
 */
import type { IncomingMessage } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Account, Store } from '../store';
import { bearerTokenOf, isRefusal, parseClientJson, problemText, PROBLEM_MEDIA_TYPE, refusal, refusalOf, type Refusal } from '../http';
import { StoreUnavailableError } from '../store';
import type { ErrorMessage, ServerMessage } from '../../generated/asyncapi/messages';
import { validateClientMessage } from '../../generated/asyncapi/validators';
import type { AcceptLimiter } from './acceptLimiter';
import { resyncMessage, SEQ_TEXT, topicOf, wsFrame, type Frame } from './frames';
import type { Subscriber, TopicHub } from './hub';
import type { SlowPeers } from './slowPeers';
import { BoundedWriter, type WriteBatcher } from './writer';

export const WS_PATH = '/orders';
export const CLOSE_TRY_AGAIN = 1013;
export const CLOSE_GOING_AWAY = 1001;
/** Largest client message accepted (a subscribe is under 100 bytes); bigger closes with 1009. */
export const MAX_CLIENT_MESSAGE_BYTES = 4096;

export type ErrorCode = ErrorMessage['code'];

export interface WsDeps {
  store: Pick<Store, 'getOrder'>;
  hub: TopicHub;
  limiter: AcceptLimiter;
  slowPeers: SlowPeers;
  /** Resolves a bearer token (header or access_token), or throws a problem with status 401. */
  /** Resolves a bearer token (header or `access_token`), or the 401 refusal. */
  authenticate: (token: string | undefined) => Promise<Account | Refusal>;
  maxBufferBytes: number;
  /** Batches writes when WRITE_DELAY_MS > 0 (writer.ts). */
  batcher?: WriteBatcher;
  onBackpressure?: () => void;
  onError?: (err: unknown) => void;
}

/**
 * An upgrade refused with a plain HTTP answer on the raw socket (there is no
 * ServerResponse before an upgrade): the same problem+json bytes as every other refusal
 * (http/respond.ts `problemText`).
 */
function refuseUpgrade(socket: Duplex, r: Refusal): void {
  const json = problemText(r);
  const lines = [`HTTP/1.1 ${r.problem.status} ${r.problem.title}`, `Content-Type: ${PROBLEM_MEDIA_TYPE}`, `Content-Length: ${Buffer.byteLength(json)}`, 'Connection: close'];
  for (const [k, v] of Object.entries(r.headers ?? {})) lines.push(`${k}: ${v}`);
  socket.end(`${lines.join('\r\n')}\r\n\r\n${json}`);
}

interface Connection {
  account: Account;
  /** The URL's `since`, until the first subscribe takes it (asyncapi.yaml: it belongs to that subscription only). */
  urlSince: number | undefined;
  subs: Map<number, Subscriber>;
  send(msg: ServerMessage): void;
  error(channel: string | null, code: ErrorCode, message: string): void;
  /** Writes a pre-framed event through the bounded queue; a slow consumer is closed 1013. */
  writeFrame(bytes: Buffer): void;
  closeTryAgain(): void;
  /** Shutdown: stop writing, close 1001. */
  goAway(): void;
}

export class WsEndpoint {
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_CLIENT_MESSAGE_BYTES });
  private readonly conns = new Set<Connection>();

  constructor(private readonly deps: WsDeps) {}

  get clients(): number {
    return this.wss.clients.size;
  }

  /** For the http server's 'upgrade' event. Other paths are not ours: 404. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    void this.upgrade(req, socket, head).catch((err) => {
      // A store outage while authenticating (503 with Retry-After, as every route answers
      // it: http/problem.ts refusalOf); anything else is logged and answered 503 too,
      // since the client can retry.
      const known = refusalOf(err);
      if (!known) this.deps.onError?.(err);
      if (!socket.destroyed && socket.writable) refuseUpgrade(socket, known ?? refusal('SERVICE_UNAVAILABLE', 'The service could not check the token: retry later', { 'Retry-After': '1' }));
      else socket.destroy();
    });
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== WS_PATH) return refuseUpgrade(socket, refusal('NOT_FOUND', `No WebSocket endpoint at ${url.pathname}`));
    // The service's one bearer rule (http/auth.ts): the header, else one `access_token` (a repeated one is no token, as on SSE).
    const token = bearerTokenOf(req.headers.authorization, parseQuery(url.search.slice(1)).access_token);
    const account = await this.deps.authenticate(token);
    if (isRefusal(account)) return refuseUpgrade(socket, account);
    const sinceParam = url.searchParams.get('since');
    if (sinceParam !== null && !SEQ_TEXT.test(sinceParam)) return refuseUpgrade(socket, refusal('BAD_REQUEST', 'since must be a non-negative integer'));
    const admitted = this.deps.limiter.take();
    if (!admitted.ok) return refuseUpgrade(socket, refusal('SERVICE_UNAVAILABLE', 'Too many new connections: retry later', { 'Retry-After': String(admitted.retryAfterS) }));
    const since = sinceParam === null ? undefined : Number(sinceParam);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.connection(ws, socket, account, since));
  }

  private connection(ws: WebSocket, socket: Duplex, account: Account, urlSince: number | undefined): void {
    // A delayed batch must not follow the close frame of a closing handshake: it waits until dropped.
    const batcher = this.deps.batcher;
    const writer = new BoundedWriter(socket, this.deps.maxBufferBytes, batcher, batcher && (() => ws.readyState === ws.OPEN));
    const unsubscribeAll = () => {
      for (const [orderId, sub] of conn.subs) this.deps.hub.unsubscribe(orderId, sub);
      conn.subs.clear();
    };
    const closeTryAgain = () => {
      if (ws.readyState !== ws.OPEN) return;
      writer.stop(); // what was queued is dropped: the close frame goes right behind what the kernel holds
      unsubscribeAll();
      ws.close(CLOSE_TRY_AGAIN, 'Try again later');
      // ws would destroy the socket 30 s after close() whether or not the peer reads; a
      // stalled client that resumes later must still find the close frame, so the socket
      // is ended instead and SlowPeers destroys it only if it never drains.
      // (`_closeTimer` is ws internals: ws is pinned to a minor version in package.json.)
      clearTimeout((ws as unknown as { _closeTimer: NodeJS.Timeout | undefined })._closeTimer);
      socket.end();
      this.deps.slowPeers.add(socket);
    };
    const write = (bytes: Buffer) => {
      if (ws.readyState !== ws.OPEN) return;
      if (writer.write(bytes) === 'slow') {
        this.deps.onBackpressure?.();
        closeTryAgain();
      }
    };
    const send = (msg: ServerMessage) => write(wsFrame(JSON.stringify(msg)));
    const conn: Connection = {
      account,
      urlSince,
      subs: new Map(),
      send,
      error: (channel, code, message) => send({ type: 'error', channel, seq: null, code, message }),
      writeFrame: write,
      closeTryAgain,
      goAway: () => {
        writer.stop();
        ws.close(CLOSE_GOING_AWAY, 'Server shutting down');
      },
    };
    this.conns.add(conn);
    ws.on('message', (data, isBinary) => {
      void this.onMessage(conn, data, isBinary).catch((err) => {
        // The store unreachable: nothing was subscribed, the same subscribe may be sent again later.
        if (err instanceof StoreUnavailableError) return conn.error(null, 'unavailable', 'The store is unavailable: subscribe again later');
        this.deps.onError?.(err);
        conn.error(null, 'internal', 'The message could not be handled');
      });
    });
    ws.on('close', () => {
      writer.stop();
      unsubscribeAll();
      this.conns.delete(conn);
    });
    ws.on('error', () => ws.terminate());
  }

  private async onMessage(conn: Connection, data: unknown, isBinary: boolean): Promise<void> {
    if (isBinary) return conn.error(null, 'bad_message', 'Messages are JSON text frames');
    // The service's one reader of client JSON: nesting bound, unpaired surrogates, repeated member names.
    const parsed = parseClientJson(String(data), 'The message');
    if (isRefusal(parsed)) return conn.error(null, 'bad_message', `Messages are JSON text frames: ${parsed.problem.detail ?? parsed.problem.title}`);
    const msg = parsed.json;
    if (!validateClientMessage(msg)) {
      const channel = typeof msg === 'object' && msg !== null && 'channel' in msg ? msg.channel : undefined;
      const detail = validateClientMessage.errors?.[0];
      return conn.error(typeof channel === 'string' ? channel : null, 'invalid_message', `Not a subscribe or unsubscribe message${detail ? `: ${detail.instancePath || '/'} ${detail.message}` : ''}`);
    }
    const orderId = Number(msg.channel.slice('order:'.length));
    if (msg.type === 'unsubscribe') {
      const sub = conn.subs.get(orderId);
      if (!sub) return conn.error(msg.channel, 'not_subscribed', 'Not subscribed to this channel');
      conn.subs.delete(orderId);
      this.deps.hub.unsubscribe(orderId, sub);
      return conn.send({ type: 'unsubscribed', channel: msg.channel, seq: sub.lastSeq });
    }
    // The URL's since belongs to the connection's first subscribe (the contract's flow: open
    // `/orders?since=<seq>`, send one subscribe); a subscribe's own since overrides it.
    const since = msg.since ?? conn.urlSince;
    conn.urlSince = undefined;
    if (conn.subs.has(orderId)) return conn.error(msg.channel, 'already_subscribed', 'Already subscribed to this channel');
    const order = await this.deps.store.getOrder(conn.account.id, orderId);
    if (!order) return conn.error(msg.channel, 'not_found', 'No such order'); // another account's order looks missing
    // Again after the await: a second subscribe for the same channel may have got here first.
    if (conn.subs.has(orderId)) return conn.error(msg.channel, 'already_subscribed', 'Already subscribed to this channel');
    const channel = topicOf(orderId);
    const sub: Subscriber = {
      lastSeq: 0,
      ack: (from, head) => conn.send({ type: 'subscribed', channel, seq: from, head }),
      write: (frame: Frame) => conn.writeFrame(frame.ws),
      resync: (seq, reason) => conn.send(resyncMessage(orderId, seq, reason)),
      // A hole: the connection closes so the client resumes with `since` = what it has.
      drop: () => {
        conn.subs.delete(orderId);
        conn.closeTryAgain();
      },
      // The topic could not be loaded: nothing is kept, so the same subscribe may be sent again.
      fail: () => {
        if (conn.subs.get(orderId) === sub) conn.subs.delete(orderId);
        conn.error(channel, 'unavailable', 'The topic could not be loaded: subscribe again later');
      },
    };
    conn.subs.set(orderId, sub);
    await this.deps.hub.subscribe(orderId, since, sub, order.revision);
  }

  /** Cuts every connection as a network failure would (no close frame). */
  dropAll(): void {
    for (const ws of this.wss.clients) ws.terminate();
  }

  /** Shutdown: close 1001 so clients reconnect (to another instance if there is one). */
  close(): void {
    for (const conn of this.conns) conn.goAway();
    this.wss.close();
  }
}
