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
 *
 * Other protocols are mounted on other paths (`mount`: graphql-transport-ws on /graphql)
 * and get the same upgrade (accept limiter, bearer rule, problem+json refusals) and the
 * same connection (`WsConnection`: the bounded queue, 1013 for a slow consumer, 1001 on
 * shutdown); only what is said on it is theirs.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData, type ServerOptions } from 'ws';
import type { Account, Store } from '../store';
import { framingRefusal, streamToken, isRefusal, readQuery, missingToken, parseClientJson, refusal, refusalOf, requestIdOf, splitTarget, writeRefusal, type RawAnswerLog, shuttingDown, type Refusal } from '../http';
import { StoreUnavailableError } from '../store';
import { parseOrderId } from '../orders';
import type { ServerMessage } from '../../generated/asyncapi/messages';
import { clientMessageTypes, validateClientMessage } from '../../generated/asyncapi/validators';
import type { AcceptLimiter } from './acceptLimiter';
import { lastChecks, type AdmissionQueue } from './admission';
import { resyncMessage, SEQ_RULE, SEQ_TEXT, topicOf, wsFrame, type Frame, type ResyncReason } from './frames';
import type { Subscriber, TopicHub } from './hub';
import { WsHeartbeat } from './heartbeat';
import type { SlowPeers } from './slowPeers';
import type { StreamQuota } from './quota';
import type { TokenRecheck } from './tokenRecheck';
import { BoundedWriter, type WriteBatcher, type WriteResult } from './writer';

export const WS_PATH = '/orders';
export const CLOSE_TRY_AGAIN = 1013;
export const CLOSE_GOING_AWAY = 1001;
/** Policy Violation (RFC 6455 7.4.1): the token the connection was opened with was revoked. */
export const CLOSE_POLICY = 1008;
/**
 * The 'error' listener of every connection. `ws` emits 'error' for a frame it refuses (1002,
 * 1007, 1009) after it has begun closing with that code itself: the close frame is written,
 * the client's remaining bytes are read and dropped, and the socket ends once the client
 * answers (or after `ws`'s 30 s close timeout). Terminating here instead destroyed a socket
 * with unread bytes, which the kernel answers with a reset that discards the close frame:
 * a client still sending a message over the limit saw 1006, not 1009. Socket errors
 * (a reset by the peer) `ws` handles by destroying the socket on its own.
 */
const closesItself = (): void => undefined;

/** Largest client message accepted (a subscribe is under 100 bytes); bigger closes with 1009. */
export const MAX_CLIENT_MESSAGE_BYTES = 4096;

/**
 * The `error` codes this server sends. The contract lists them as an `x-extensible-enum`
 * (clients accept codes added later, so its generated type is `string`); the server's own
 * set is closed, and a test keeps it equal to the contract's list.
 */
export const ERROR_CODES = ['bad_message', 'invalid_message', 'not_found', 'already_subscribed', 'not_subscribed', 'too_many_subscriptions', 'unavailable', 'internal'] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export interface WsDeps {
  store: Pick<Store, 'getOrder'>;
  hub: TopicHub;
  limiter: AcceptLimiter;
  /** New connections are checked a slice per turn of the event loop (admission.ts). */
  admission: AdmissionQueue;
  slowPeers: SlowPeers;
  /** Concurrent streams per account (quota.ts): a connection holds a place until its socket closes. */
  quota: StreamQuota;
  /** The tokens connections were opened with, checked again: a revoked one's connections close 1008 (tokenRecheck.ts). */
  tokens: TokenRecheck;
  /** Resolves a bearer token (header or `access_token`), or the 401 refusal. */
  authenticate: (token: string | undefined) => Promise<Account | Refusal>;
  maxBufferBytes: number;
  /** Batches writes when WRITE_DELAY_MS > 0 (writer.ts). */
  batcher?: WriteBatcher;
  onBackpressure?: () => void;
  onError?: (err: unknown) => void;
  /** Ping every connection this often, and cut one that left the last ping unanswered (heartbeat.ts); 0: never. */
  heartbeatMs: number;
  /** Told of each connection cut for a missing pong. */
  onHeartbeatTimeout?: () => void;
  /** Told of each handshake answered, refused or accepted (101), for its log line and metric (Finalizer.rawAnswer). */
  logAnswer?: RawAnswerLog;
  /** Channels one connection may be subscribed to at once (MAX_SUBSCRIPTIONS_PER_CONNECTION); one more is `too_many_subscriptions`. */
  maxSubscriptions: number;
}

/** The client messages' types as a sentence names them: `"subscribe" or "unsubscribe"`. */
const KNOWN_TYPES = clientMessageTypes
  .map((t) => JSON.stringify(t))
  .join(', ')
  .replace(/, ([^,]*)$/, ' or $1');

/**
 * What is wrong with a client message the schema refuses, in the client's terms: an unknown
 * `type` named as such, else the first fault of the message its `type` names (the schema is a
 * oneOf of the two, whose first error is often the other branch's `type` constant).
 */
export function invalidMessageText(msg: unknown, errors: readonly { instancePath: string; message?: string; params: Record<string, unknown> }[] | null | undefined): string {
  const type = typeof msg === 'object' && msg !== null && 'type' in msg ? msg.type : undefined;
  if (typeof type !== 'string' || !clientMessageTypes.includes(type)) return `type must be ${KNOWN_TYPES}, not ${type === undefined ? 'absent' : (JSON.stringify(type) ?? 'absent').slice(0, 64)}`;
  const fault = errors?.find((e) => e.instancePath !== '/type');
  if (!fault) return `Not a valid ${type} message`;
  const extra = fault.params.additionalProperty;
  const what = typeof extra === 'string' ? `has no member "${extra}"` : (fault.message ?? 'is not valid');
  return `Not a valid ${type} message: ${fault.instancePath || 'the message'} ${what}`;
}

/** Messages of one connection waiting their turn before it stops reading (see `connection`). */
export const MAX_QUEUED_MESSAGES = 64;

const WS_KEY = /^[+/0-9A-Za-z]{22}==$/;

/**
 * The handshake fields ws checks (RFC 6455 4.2.1), checked first so that a bad one is
 * refused as a problem like every other refusal, before any token is looked up: ws would
 * answer text/html. The method and `Upgrade: websocket` are settled before the upgrade
 * reaches the endpoint (http/upgrade.ts).
 */
function handshakeRefusal(req: IncomingMessage): Refusal | undefined {
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 0) return refusal('BAD_REQUEST', 'A WebSocket opening handshake is an HTTP/1.1 request (RFC 6455 4.1)');
  const framing = framingRefusal(req); // Host present and single, one Authorization: what every request is checked for (http/framing.ts)
  if (framing) return framing;
  const key = req.headers['sec-websocket-key'];
  if (key === undefined || !WS_KEY.test(key)) return refusal('BAD_REQUEST', 'Missing or invalid Sec-WebSocket-Key header');
  // The field's value exactly (RFC 6455 4.1: a version has no leading zero; ws would take `013` for 13).
  const version = req.headers['sec-websocket-version']?.trim();
  if (version !== '13' && version !== '8') return refusal('BAD_REQUEST', 'Missing or unsupported Sec-WebSocket-Version: this server speaks 13 and 8', { 'Sec-WebSocket-Version': '13, 8' });
  return undefined;
}

/**
 * A connection as a mounted protocol sees it: text out through the bounded queue (a slow
 * consumer is closed 1013 by the queue itself), text in, close.
 */
export interface WsConnection {
  /** The subprotocol the upgrade selected ('' for none). */
  readonly protocol: string;
  /** Frames a text message and writes it through the bounded queue. */
  send(text: string): void;
  /** Writes a pre-framed text frame (frames.ts `wsFrame`) through the bounded queue. */
  writeFrame(bytes: Buffer): void;
  /** Closes with the protocol's code (what is queued still goes out first). */
  close(code: number, reason: string): void;
  /** Closes 1013 "Try again later" right behind what the kernel holds (a hole in delivery). */
  closeTryAgain(): void;
  onMessage(listener: (text: string) => void): void;
  onClose(listener: (code: number, reason: string) => void): void;
  /**
   * In-band authentication: holds a quota place for `account`, and `token` for its recheck
   * (a revoked one closes the connection 1008), until the connection closes; false when the
   * account has no place left. A connection whose upgrade carried a token holds both already.
   */
  claim(account: number, token: string): boolean;
  /** Holds one more token for its recheck (a revoked one closes the connection 1008) until the connection closes: a second credential it was given in band. */
  holdToken(token: string): void;
}

/** A protocol served on its own upgrade path (mounted with `WsEndpoint.mount`). */
export interface WsProtocol {
  /** ws's `handleProtocols`: the subprotocol chosen from those the client offers, or false for none. */
  selectProtocol(offered: Set<string>): string | false;
  /** Largest client message accepted; bigger closes with 1009. */
  maxPayload: number;
  /**
   * A connection is open. `account`: the upgrade's bearer token (header or `access_token`)
   * when it had one; undefined when it had none, and the protocol authenticates in band.
   */
  open(conn: WsConnection, account: Account | undefined): void;
}

/** A text message's UTF-8 (ws hands a Buffer, or fragments as a list). */
const textOf = (data: RawData): string => (Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');

/** Every WebSocket endpoint reads JSON text frames; a binary frame is refused with this, whatever its bytes. */
const BINARY_REFUSED = 'Messages are JSON text frames, not binary frames';

interface Mounted {
  protocol: WsProtocol;
  wss: WebSocketServer;
}

/**
 * An upgrade's target as a URL: an absolute-form one node passed on (`http://x:99999/orders`)
 * may be none (the client's error). An origin-form one is a path whatever it starts with
 * (`//orders` is no authority), and its path is matched as sent, as the pipeline matches it
 * (`/x/../orders` is no endpoint): `pathOf`.
 */
function urlOf(target: string): URL | undefined {
  const href = target.startsWith('/') ? `http://localhost${target}` : target;
  return URL.canParse(href) ? new URL(href) : undefined;
}
const pathOf = (target: string): string | undefined => (target.startsWith('/') ? splitTarget(target)[0] : urlOf(target)?.pathname);

/**
 * The bounded writer of one connection and its two goodbyes (slow consumer, shutdown).
 * A class with its parts as fields, not closures: every delivery to every subscriber of a
 * topic runs `write`, and at 10,000 connections each object it reaches on the way to the
 * socket is likely a cache miss (the realtime floor bench: CPU per delivered message).
 */
class Outbox extends BoundedWriter {
  /** Called when the connection stops for being slow (before the close frame). */
  onSlow?: () => void;

  constructor(
    private readonly ws: WebSocket,
    private readonly socket: Duplex,
    private readonly deps: Pick<WsDeps, 'batcher' | 'maxBufferBytes' | 'onBackpressure' | 'slowPeers'>,
  ) {
    // A delayed batch must not follow the close frame of a closing handshake: it waits until dropped.
    super(socket, deps.maxBufferBytes, deps.batcher, deps.batcher && (() => ws.readyState === ws.OPEN));
  }

  /** Writes unless the WebSocket is closing; a slow consumer is closed 1013. */
  override write(bytes: Buffer): WriteResult {
    if (this.ws.readyState !== OPEN) return 'closed';
    const result = super.write(bytes);
    if (result === 'slow') {
      this.deps.onBackpressure?.();
      this.closeTryAgain();
    }
    return result;
  }

  closeTryAgain(): void {
    const { ws, socket } = this;
    if (ws.readyState !== OPEN) return;
    this.stop(); // what was queued is dropped: the close frame goes right behind what the kernel holds
    this.onSlow?.();
    ws.close(CLOSE_TRY_AGAIN, 'Try again later');
    // ws would destroy the socket 30 s after close() whether or not the peer reads; a
    // stalled client that resumes later must still find the close frame, so the socket
    // is ended instead and SlowPeers destroys it only if it never drains.
    // (`_closeTimer` is ws internals: ws is pinned to a minor version in package.json.)
    clearTimeout((ws as unknown as { _closeTimer: NodeJS.Timeout | undefined })._closeTimer);
    socket.end();
    this.deps.slowPeers.add(socket);
  }

  /**
   * Shutdown: what only waits for the write delay (WRITE_DELAY_MS) goes out first, as on SSE
   * (sse.ts `end`), then the close frame; what waits for a slow socket to drain is dropped,
   * and the client resumes with `since`.
   */
  goAway(): void {
    this.flushDelayed();
    this.stop();
    this.ws.close(CLOSE_GOING_AWAY, 'Server shutting down');
  }
}

/**
 * One channel of a connection, as the hub drives it (hub.ts Subscriber). A class, not an
 * object of closures, for the reason Outbox is one: `write` runs once per delivery.
 */
class WsSubscription implements Subscriber {
  lastSeq = 0;
  private readonly outbox: Outbox;

  constructor(
    private readonly conn: Connection,
    private readonly orderId: number,
    private readonly channel: string,
  ) {
    this.outbox = conn.outbox;
  }

  ack(from: number, head: number): void {
    this.conn.send({ type: 'subscribed', channel: this.channel, seq: from, head });
  }

  write(frame: Frame): void {
    this.outbox.write(frame.ws);
  }

  resync(seq: number, reason: ResyncReason): void {
    this.conn.send(resyncMessage(this.orderId, seq, reason));
  }

  /** A hole: the connection closes so the client resumes with `since` = what it has. */
  drop(): void {
    this.conn.subs.delete(this.orderId);
    this.conn.closeTryAgain();
  }

  /** The topic could not be loaded: nothing is kept, so the same subscribe may be sent again. */
  fail(): void {
    if (this.conn.subs.get(this.orderId) === this) this.conn.subs.delete(this.orderId);
    this.conn.error(this.channel, 'unavailable', 'The topic could not be loaded: subscribe again later');
  }
}

/** ws's OPEN (the same constant on every WebSocket). */
const OPEN = WebSocket.OPEN;

interface Connection {
  account: Account;
  /** The URL's `since`, until the first subscription takes it (asyncapi.yaml: it belongs to that subscription only). */
  urlSince: number | undefined;
  subs: Map<number, Subscriber>;
  /** False once the connection closed or was closed as a slow consumer: messages still queued subscribe nothing. */
  open: boolean;
  send(msg: ServerMessage): void;
  error(channel: string | null, code: ErrorCode, message: string): void;
  /** Writes pre-framed events through the bounded queue; a slow consumer is closed 1013. */
  outbox: Outbox;
  closeTryAgain(): void;
  /** Shutdown: stop writing, close 1001. */
  goAway(): void;
}

export class WsEndpoint {
  // /orders speaks no subprotocol: one a client offers is not echoed (RFC 6455 4.2.2; ws would pick the first).
  private readonly wss = this.server({ maxPayload: MAX_CLIENT_MESSAGE_BYTES, handleProtocols: () => false });
  /** The request id of each handshake being accepted, for its 101 (see `accept`). */
  private readonly acceptedIds = new WeakMap<IncomingMessage, string>();
  /** The WebSocket on each upgraded socket (a revoked token closes it: claim). */
  private readonly upgraded = new WeakMap<Duplex, WebSocket>();
  /** Every open connection's goodbye for shutdown, whatever its protocol. */
  private readonly conns = new Set<{ goAway(): void }>();
  private readonly mounted = new Map<string, Mounted>();
  /** Liveness of every connection, whatever its path. */
  readonly heartbeat: WsHeartbeat;

  /**
   * A ws server for one path (upgrades handed to it, no compression): ws's own refusals of what
   * handshakeRefusal does not check (a malformed subprotocol list) are problems too, and the 101
   * of a handshake accepted carries its request id, as every answer does.
   */
  private server(options: Pick<ServerOptions, 'maxPayload' | 'handleProtocols'>): WebSocketServer {
    const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, ...options });
    wss.on('wsClientError', (err: Error, socket: Duplex, req: IncomingMessage) => this.refuse(req, socket, refusal('BAD_REQUEST', err.message)));
    wss.on('headers', (headers: string[], req: IncomingMessage) => {
      const id = this.acceptedIds.get(req);
      if (id !== undefined) headers.push(`X-Request-Id: ${id}`);
    });
    return wss;
  }

  /**
   * A refused handshake: the problem on the raw socket, then its log line and metric, under
   * its endpoint's route (`ws:/orders`, `ws:/graphql`) when the path is one, as an accepted one
   * is counted (an accept-limiter storm then shows as `ws:/orders` 503s); else `unmatched`.
   */
  private refuse(req: IncomingMessage, socket: Duplex, r: Refusal): void {
    const id = writeRefusal(req, socket, r);
    const path = pathOf(req.url ?? '/');
    this.deps.logAnswer?.(req, r.problem.status, id, path !== undefined && (path === WS_PATH || this.mounted.has(path)) ? `ws:${path}` : undefined);
  }

  /** An accepted handshake: its 101 with the request id, then its log line and metric (route `ws:<path>`, apart from the HTTP routes of that path), then the connection. */
  private accept(wss: WebSocketServer, route: string, req: IncomingMessage, socket: Duplex, head: Buffer, open: (ws: WebSocket) => void): void {
    const id = requestIdOf(req);
    this.acceptedIds.set(req, id);
    wss.handleUpgrade(req, socket, head, (ws) => {
      this.deps.logAnswer?.(req, 101, id, `ws:${route}`);
      open(ws);
    });
  }

  constructor(private readonly deps: WsDeps) {
    this.heartbeat = new WsHeartbeat(() => this.allClients(), deps.heartbeatMs, deps.onHeartbeatTimeout);
  }

  private *allClients(): Iterable<WebSocket> {
    yield* this.wss.clients;
    for (const m of this.mounted.values()) yield* m.wss.clients;
  }

  get clients(): number {
    let n = this.wss.clients.size;
    for (const m of this.mounted.values()) n += m.wss.clients.size;
    return n;
  }

  /** Serves another protocol's upgrades on `path` (e.g. graphql-transport-ws on /graphql). */
  mount(path: string, protocol: WsProtocol): void {
    const wss = this.server({ maxPayload: protocol.maxPayload, handleProtocols: (offered) => protocol.selectProtocol(offered) });
    this.mounted.set(path, { protocol, wss });
  }

  /** For the http server's 'upgrade' event. Other paths are not ours: 404. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // Before anything waits: a client that resets its connection while queued must not crash the process.
    socket.on('error', () => socket.destroy());
    void this.upgradeInTurn(req, socket, head).catch((err) => {
      // A store outage while authenticating (503 with Retry-After, as every route answers
      // it: http/problem.ts refusalOf); anything else is a bug, logged and answered 500, as
      // the pipeline answers it on every other route (an SSE stream's token check included).
      const known = refusalOf(err);
      if (!known) this.deps.onError?.(err);
      if (!socket.destroyed && socket.writable) this.refuse(req, socket, known ?? refusal('INTERNAL'));
      else socket.destroy();
    });
  }

  /** Waits for the connection's turn (admission.ts); a client that left meanwhile (reset, or closed its side) is not checked. */
  private async upgradeInTurn(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const open = await this.deps.admission.turn(() => isOpen(socket));
    if (!isOpen(socket)) return void socket.destroy();
    if (!open) return this.refuse(req, socket, shuttingDown());
    return this.upgrade(req, socket, head);
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = urlOf(req.url ?? '/');
    if (!url) return this.refuse(req, socket, refusal('BAD_REQUEST', 'The request target is not a valid URL'));
    const path = pathOf(req.url ?? '/') ?? url.pathname;
    const mounted = this.mounted.get(path);
    if (path !== WS_PATH && !mounted) return this.refuse(req, socket, refusal('NOT_FOUND', `No WebSocket endpoint at ${path}`));
    const badHandshake = handshakeRefusal(req);
    if (badHandshake) return this.refuse(req, socket, badHandshake);
    // The service's one bearer rule for streams (http/auth.ts): the header, else one `access_token` (both, or a repeated one: 400, as on SSE).
    const query = readQuery(splitTarget(req.url ?? '/')[1]); // the query as sent, as the path is read (pathOf)
    if (isRefusal(query)) return this.refuse(req, socket, query);
    const token = streamToken(req.headers.authorization, query.access_token);
    if (token !== undefined && typeof token !== 'string') return this.refuse(req, socket, token);
    if (mounted) return this.upgradeMounted(mounted, path, token, req, socket, head);
    if (token === undefined) return this.refuse(req, socket, missingToken());
    const account = await this.deps.authenticate(token);
    if (isRefusal(account)) return this.refuse(req, socket, account);
    const sinceSent = query.since;
    // Two would be read as the first here and perhaps as the last by a proxy: refused, as a repeated access_token is.
    if (Array.isArray(sinceSent)) return this.refuse(req, socket, refusal('BAD_REQUEST', 'since may appear once'));
    const sinceParam = sinceSent ?? null;
    if (sinceParam !== null && !SEQ_TEXT.test(sinceParam)) return this.refuse(req, socket, refusal('BAD_REQUEST', `since must be ${SEQ_RULE}`));
    const refused = this.admit(socket, account.id, token);
    if (refused) return this.refuse(req, socket, refused);
    const since = sinceParam === null ? undefined : Number(sinceParam);
    this.accept(this.wss, WS_PATH, req, socket, head, (ws) => {
      this.upgraded.set(socket, ws);
      this.heartbeat.watch(ws);
      this.connection(ws, socket, account, since);
    });
  }

  /**
   * A mounted protocol's upgrade: a token, when the upgrade carries one, must be valid
   * (401 otherwise); without one the protocol authenticates in band (graphql-transport-ws:
   * the `connection_init` payload, which browsers can send and headers they cannot).
   */
  private async upgradeMounted({ protocol, wss }: Mounted, path: string, token: string | undefined, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    let account: Account | undefined;
    if (token !== undefined) {
      const found = await this.deps.authenticate(token);
      if (isRefusal(found)) return this.refuse(req, socket, found);
      account = found;
    }
    const refused = this.admit(socket, account?.id, token);
    if (refused) return this.refuse(req, socket, refused);
    this.accept(wss, path, req, socket, head, (ws) => {
      this.upgraded.set(socket, ws);
      this.heartbeat.watch(ws);
      const outbox = new Outbox(ws, socket, this.deps);
      const closeListeners: ((code: number, reason: string) => void)[] = [];
      let ended = false;
      /** The protocol hears of the end once: at the close, or already when a slow consumer is closed (its socket may linger for minutes). */
      const end = (code: number, reason: string) => {
        if (ended) return;
        ended = true;
        for (const listener of closeListeners) listener(code, reason);
      };
      outbox.onSlow = () => end(CLOSE_TRY_AGAIN, 'Try again later');
      const entry = { goAway: () => outbox.goAway() };
      this.conns.add(entry);
      ws.on('close', (code, reason) => {
        outbox.stop();
        this.conns.delete(entry);
        end(code, String(reason));
      });
      ws.on('error', closesItself);
      protocol.open(
        {
          protocol: ws.protocol,
          send: (text) => outbox.write(wsFrame(text)),
          writeFrame: (bytes) => outbox.write(bytes),
          close: (code, reason) => ws.close(code, reason),
          closeTryAgain: () => outbox.closeTryAgain(),
          // A binary frame is refused as /orders refuses it, naming the frame type (its bytes may well be JSON): graphql-ws's 4400.
          onMessage: (listener) => void ws.on('message', (data, isBinary) => (isBinary ? ws.close(4400, BINARY_REFUSED) : listener(textOf(data)))),
          onClose: (listener) => void closeListeners.push(listener),
          claim: (id, inBand) => this.claim(socket, id, inBand),
          holdToken: (inBand) => this.holdToken(socket, inBand),
        },
        account,
      );
    });
  }

  private connection(ws: WebSocket, socket: Duplex, account: Account, urlSince: number | undefined): void {
    const outbox = new Outbox(ws, socket, this.deps);
    const unsubscribeAll = () => {
      conn.open = false;
      for (const [orderId, sub] of conn.subs) this.deps.hub.unsubscribe(orderId, sub);
      conn.subs.clear();
    };
    outbox.onSlow = unsubscribeAll;
    const send = (msg: ServerMessage) => outbox.write(wsFrame(JSON.stringify(msg)));
    const conn: Connection = {
      account,
      urlSince,
      subs: new Map(),
      open: true,
      send,
      error: (channel, code, message) => send({ type: 'error', channel, seq: null, code, message }),
      outbox,
      closeTryAgain: () => outbox.closeTryAgain(),
      goAway: () => outbox.goAway(),
    };
    this.conns.add(conn);
    // One message after another, in the order sent: a subscribe waits for the store and the
    // hub (ack and replay), and an unsubscribe or subscribe sent right behind it must find it
    // done, not race it (an unsubscribe would answer not_subscribed, or seq 0, and the
    // subscribe would then go live after all). The queue is bounded: with MAX_QUEUED_MESSAGES
    // waiting the connection stops reading (so TCP holds the client back) until half are handled.
    let handled: Promise<void> = Promise.resolve();
    let queued = 0;
    const done = () => {
      if (--queued <= MAX_QUEUED_MESSAGES / 2 && ws.isPaused) ws.resume();
    };
    ws.on('message', (data, isBinary) => {
      if (++queued >= MAX_QUEUED_MESSAGES) ws.pause();
      handled = handled
        .then(() => this.onMessage(conn, data, isBinary))
        .catch((err: unknown) => {
          // The store unreachable: nothing was subscribed, the same subscribe may be sent again later.
          if (err instanceof StoreUnavailableError) return conn.error(null, 'unavailable', 'The store is unavailable: subscribe again later');
          this.deps.onError?.(err);
          conn.error(null, 'internal', 'The message could not be handled');
        })
        .then(done);
    });
    ws.on('close', () => {
      outbox.stop();
      unsubscribeAll();
      this.conns.delete(conn);
    });
    ws.on('error', closesItself);
  }

  private async onMessage(conn: Connection, data: unknown, isBinary: boolean): Promise<void> {
    if (!conn.open) return;
    if (isBinary) return conn.error(null, 'bad_message', BINARY_REFUSED);
    // The service's one reader of client JSON: nesting bound, unpaired surrogates, repeated member names.
    const parsed = parseClientJson(String(data), 'The message');
    if (isRefusal(parsed)) return conn.error(null, 'bad_message', `Messages are JSON text frames: ${parsed.problem.detail ?? parsed.problem.title}`);
    const msg = parsed.json;
    if (!validateClientMessage(msg)) {
      const channel = typeof msg === 'object' && msg !== null && 'channel' in msg ? msg.channel : undefined;
      return conn.error(typeof channel === 'string' ? channel : null, 'invalid_message', invalidMessageText(msg, validateClientMessage.errors));
    }
    // The channel's pattern admits a few 16-digit numbers above 2^53 - 1: no order has such an id, and SSE refuses them (400) as REST does.
    const orderId = parseOrderId(msg.channel.slice('order:'.length));
    if (orderId === null) return conn.error(msg.channel, 'invalid_message', 'The channel names no order: order:<id>, id from 1 to 2^53 - 1');
    if (msg.type === 'unsubscribe') {
      const sub = conn.subs.get(orderId);
      if (!sub) return conn.error(msg.channel, 'not_subscribed', 'Not subscribed to this channel');
      conn.subs.delete(orderId);
      this.deps.hub.unsubscribe(orderId, sub);
      return conn.send({ type: 'unsubscribed', channel: msg.channel, seq: sub.lastSeq });
    }
    // A position beyond 2^53 - 1 cannot be read back exactly (I-JSON, RFC 7493 2.2), as SSE's Last-Event-ID and `?since=` refuse it.
    if (msg.since !== undefined && !Number.isSafeInteger(msg.since)) return conn.error(msg.channel, 'invalid_message', `since must be ${SEQ_RULE}`);
    if (conn.subs.has(orderId)) return conn.error(msg.channel, 'already_subscribed', 'Already subscribed to this channel');
    if (conn.subs.size >= this.deps.maxSubscriptions) {
      return conn.error(msg.channel, 'too_many_subscriptions', `A connection holds at most ${this.deps.maxSubscriptions} subscriptions: unsubscribe from one, or open another connection`);
    }
    let order: Awaited<ReturnType<Store['getOrder']>>;
    try {
      order = await this.deps.store.getOrder(conn.account.id, orderId);
    } catch (err) {
      // The store unreachable: nothing was subscribed, the same subscribe may be sent again later (named by its channel).
      if (err instanceof StoreUnavailableError) return conn.error(msg.channel, 'unavailable', 'The store is unavailable: subscribe again later');
      throw err;
    }
    if (!order) return conn.error(msg.channel, 'not_found', 'No such order'); // another account's order looks missing
    if (!conn.open) return; // closed while the store answered (messages run one at a time: no other subscribe came in between)
    // The URL's since belongs to the connection's first subscription (the contract's flow: open
    // `/orders?since=<seq>`, send one subscribe); a subscribe's own since overrides it. It is
    // taken once a subscription exists: a subscribe refused (above) or whose topic could not be
    // loaded (`fail`) made none, so the same subscribe sent again still resumes from it.
    const since = msg.since ?? conn.urlSince;
    const channel = topicOf(orderId);
    const sub = new WsSubscription(conn, orderId, channel);
    conn.subs.set(orderId, sub);
    await this.deps.hub.subscribe(orderId, since, sub, order.revision);
    if (conn.subs.get(orderId) === sub) conn.urlSince = undefined;
  }

  /** The last checks of an upgrade (admission.ts `lastChecks`, as on SSE), then the account's place is taken. */
  private admit(socket: Duplex, account: number | undefined, token: string | undefined): Refusal | undefined {
    const refused = lastChecks(this.deps, account);
    if (refused) return refused;
    if (account !== undefined && token !== undefined && !this.claim(socket, account, token)) return this.deps.quota.refusal();
    return undefined;
  }

  /**
   * The connection on `socket` takes a place of `account`'s (quota.ts) and holds its token
   * (tokenRecheck.ts) until the socket closes, whatever ends it (a refusal, a close, a cut); false when the account has no place left.
   * A revoked token closes the connection 1008 (its socket before the upgrade completes).
   */
  private claim(socket: Duplex, account: number, token: string): boolean {
    const { quota } = this.deps;
    // A client that left while its token was checked: its 'close' has passed, so nothing would
    // give the place back. It takes none (its refusal goes nowhere).
    if (socket.destroyed) return false;
    if (!quota.take(account)) return false;
    socket.once('close', () => quota.release(account));
    this.holdToken(socket, token);
    return true;
  }

  /** Holds `token` for the recheck until `socket` closes: revoked, it closes the connection 1008 (the socket, before the upgrade completes). */
  private holdToken(socket: Duplex, token: string): void {
    const release = this.deps.tokens.hold(token, () => {
      const ws = this.upgraded.get(socket);
      if (ws) ws.close(CLOSE_POLICY, 'Token revoked');
      else socket.destroy();
    });
    socket.once('close', release);
  }

  /** Cuts every connection as a network failure would (no close frame). */
  dropAll(): void {
    for (const ws of this.allClients()) ws.terminate();
  }

  /** Shutdown: close 1001 so clients reconnect (to another instance if there is one). */
  close(): void {
    this.heartbeat.close();
    for (const conn of this.conns) conn.goAway();
    this.wss.close();
    for (const m of this.mounted.values()) m.wss.close();
  }
}

/** Whether a connection waiting for its turn still has its client: not reset, and neither side closed. */
function isOpen(socket: Duplex): boolean {
  return !socket.destroyed && socket.writable && socket.readable;
}
