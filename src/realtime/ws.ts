/**
 * WebSocket: `/orders?since=<seq>` via `ws`. The upgrade is authenticated (bearer
 * header or `access_token`) and admitted by the accept limiter before `ws` takes the
 * socket; refusals are plain HTTP answers on the socket (401, 400, 404, 503 with
 * Retry-After). Client messages are checked with the validators generated from the
 * AsyncAPI contract; a bad one gets an `error` message and the connection stays open.
 * Event frames are the hub's pre-framed bytes, written straight to the socket (ws
 * writes unmasked, uncompressed frames synchronously too, so frames never interleave).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Account, Store } from '../store';
import type { ServerMessage } from '../../generated/asyncapi/messages';
import { validateClientMessage } from '../../generated/asyncapi/validators';
import type { AcceptLimiter } from './acceptLimiter';
import { resyncMessage, topicOf, type Frame } from './frames';
import type { Subscriber, TopicHub } from './hub';

export const WS_PATH = '/orders';
const SEQ = /^(0|[1-9][0-9]{0,14})$/;
export const CLOSE_TRY_AGAIN = 1013;
export const CLOSE_GOING_AWAY = 1001;
const CLOSE_GRACE_MS = 5000;

export interface WsDeps {
  store: Pick<Store, 'getOrder'>;
  hub: TopicHub;
  limiter: AcceptLimiter;
  /** Resolves a bearer token (header or access_token), or throws a problem with status 401. */
  authenticate: (token: string | undefined) => Promise<Account>;
  maxBufferBytes: number;
  onBackpressure?: () => void;
}

function refuse(socket: Duplex, status: number, reason: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ status, title: reason });
  const lines = [`HTTP/1.1 ${status} ${reason}`, 'Content-Type: application/problem+json', `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

interface Connection {
  account: Account;
  /** The URL's `since`: the default for subscriptions that name none. */
  urlSince: number | undefined;
  subs: Map<number, Subscriber>;
  send(msg: ServerMessage): void;
  error(channel: string | null, code: string, message: string): void;
  /** Writes a pre-framed event; over MAX_BUFFER_BYTES pending, closes 1013. */
  writeFrame(bytes: Buffer): void;
  closeTryAgain(): void;
}

export class WsEndpoint {
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 4096 });

  constructor(private readonly deps: WsDeps) {}

  get clients(): number {
    return this.wss.clients.size;
  }

  /** For the http server's 'upgrade' event. Other paths are not ours: 404. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    void this.upgrade(req, socket, head).catch(() => socket.destroy());
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== WS_PATH) return refuse(socket, 404, 'Not Found');
    const header = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? '');
    let account: Account;
    try {
      account = await this.deps.authenticate(header?.[1] ?? url.searchParams.get('access_token') ?? undefined);
    } catch (err) {
      const e = err as { status?: number; headers?: Record<string, string> };
      if (e.status !== 401) throw err;
      return refuse(socket, 401, 'Unauthorized', e.headers);
    }
    const sinceParam = url.searchParams.get('since');
    if (sinceParam !== null && !SEQ.test(sinceParam)) return refuse(socket, 400, 'Bad Request');
    const admitted = this.deps.limiter.take();
    if (!admitted.ok) return refuse(socket, 503, 'Service Unavailable', { 'Retry-After': String(admitted.retryAfterS) });
    const since = sinceParam === null || sinceParam === '0' ? undefined : Number(sinceParam);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.connection(ws, socket, account, since));
  }

  private connection(ws: WebSocket, socket: Duplex, account: Account, urlSince: number | undefined): void {
    const send = (msg: ServerMessage) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
    };
    const closeTryAgain = () => {
      if (ws.readyState !== ws.OPEN) return;
      ws.close(CLOSE_TRY_AGAIN, 'Try again later');
      // Nothing more is written to it; a stalled peer that never reads its way to the
      // close frame is cut after a grace period, so its buffers are not held for ws's 30 s.
      setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
    };
    const conn: Connection = {
      account,
      urlSince,
      subs: new Map(),
      send,
      error: (channel, code, message) => send({ type: 'error', channel, seq: null, code, message }),
      writeFrame: (bytes) => {
        if (ws.readyState !== ws.OPEN) return;
        socket.write(bytes);
        if (ws.bufferedAmount > this.deps.maxBufferBytes) {
          this.deps.onBackpressure?.();
          closeTryAgain();
        }
      },
      closeTryAgain,
    };
    ws.on('message', (data, isBinary) => {
      void this.onMessage(conn, data, isBinary).catch(() => conn.error(null, 'internal', 'The message could not be handled'));
    });
    ws.on('close', () => {
      for (const [orderId, sub] of conn.subs) this.deps.hub.unsubscribe(orderId, sub);
      conn.subs.clear();
    });
    ws.on('error', () => ws.terminate());
  }

  private async onMessage(conn: Connection, data: unknown, isBinary: boolean): Promise<void> {
    let msg: unknown;
    try {
      msg = isBinary ? undefined : JSON.parse(String(data));
    } catch {
      msg = undefined;
    }
    if (msg === undefined) return conn.error(null, 'bad_message', 'Messages are JSON text frames');
    if (!validateClientMessage(msg)) {
      const channel = (msg as { channel?: unknown } | null)?.channel;
      const detail = validateClientMessage.errors?.[0];
      return conn.error(
        typeof channel === 'string' ? channel : null,
        'invalid_message',
        `Not a subscribe or unsubscribe message${detail ? `: ${detail.instancePath || '/'} ${detail.message}` : ''}`,
      );
    }
    const orderId = Number(msg.channel.slice('order:'.length));
    if (msg.type === 'unsubscribe') {
      const sub = conn.subs.get(orderId);
      if (!sub) return conn.error(msg.channel, 'not_subscribed', 'Not subscribed to this channel');
      conn.subs.delete(orderId);
      this.deps.hub.unsubscribe(orderId, sub);
      return conn.send({ type: 'unsubscribed', channel: msg.channel, seq: sub.lastSeq });
    }
    if (conn.subs.has(orderId)) return conn.error(msg.channel, 'already_subscribed', 'Already subscribed to this channel');
    const order = await this.deps.store.getOrder(conn.account.id, orderId);
    if (!order) return conn.error(msg.channel, 'not_found', 'No such order'); // another account's order looks missing
    // Again after the await: a second subscribe for the same channel may have got here first.
    if (conn.subs.has(orderId)) return conn.error(msg.channel, 'already_subscribed', 'Already subscribed to this channel');
    const channel = topicOf(orderId);
    const sub: Subscriber = {
      lastSeq: 0,
      ack: (seq) => conn.send({ type: 'subscribed', channel, seq }),
      write: (frame: Frame) => conn.writeFrame(frame.ws),
      resync: (seq) => conn.send(resyncMessage(orderId, seq)),
      // A hole: the connection closes so the client resumes with `since` = what it has.
      drop: () => {
        conn.subs.delete(orderId);
        conn.closeTryAgain();
      },
    };
    conn.subs.set(orderId, sub);
    const since = msg.since === undefined || msg.since === 0 ? conn.urlSince : msg.since;
    await this.deps.hub.subscribe(orderId, since, sub, order.revision);
  }

  /** Cuts every connection as a network failure would (no close frame). */
  dropAll(): void {
    for (const ws of this.wss.clients) ws.terminate();
  }

  /** Shutdown: close 1001 so clients reconnect (to another instance if there is one). */
  close(): void {
    for (const ws of this.wss.clients) ws.close(CLOSE_GOING_AWAY, 'Server shutting down');
    this.wss.close();
  }
}
