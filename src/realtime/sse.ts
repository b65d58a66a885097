/**
 * SSE: `GET /api/orders/{id}/stream`. `retry:` once, then the replay after
 * Last-Event-ID (or one `resync`), then live events; a comment heartbeat every SSE_HEARTBEAT_S
 * from one shared timer (no timer per connection). The server ends a stream only on
 * shutdown or backpressure. Errors before the stream starts are problem+json.
 *
 * A transport route of the request pipeline (`sseRoute`, http/pipeline.ts): the pipeline
 * begins the exchange (request id, CORS), answers OPTIONS and 405 and writes refusals;
 * an idle stream is held for hours, and holds no framework context: one `SseStream`
 * object (the hub's subscriber, holding its bounded writer), one entry in `open` and one
 * 'close' listener.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Account, Store } from '../store';
import { parseOrderId } from '../orders';
import {
  acceptsType,
  decodePathSegment,
  isRefusal,
  readQuery,
  responseOn,
  sendsBody,
  streamToken,
  missingToken,
  refusal,
  send,
  sendProblem,
  shuttingDown,
  type Exchange,
  type Finalizer,
  type Refusal,
  type TransportRoute,
} from '../http';
import type { AcceptLimiter } from './acceptLimiter';
import { lastChecks, type AdmissionQueue } from './admission';
import { httpChunk, resyncMessage, SEQ_RULE, SEQ_TEXT, sseFrame, topicOf, type Frame, type ResyncReason } from './frames';
import type { Subscriber, TopicHub } from './hub';
import type { SlowPeers } from './slowPeers';
import type { StreamQuota } from './quota';
import type { TokenRecheck } from './tokenRecheck';
import { BoundedWriter, type WriteBatcher } from './writer';

export const SSE_PATH = /^\/api\/orders\/([^/]+)\/stream$/;
/** The route template (metrics label). */
export const SSE_ROUTE = '/api/orders/{orderId}/stream';
export const SSE_RETRY_MS = 2000;

export interface SseDeps {
  store: Pick<Store, 'getOrder'>;
  hub: TopicHub;
  limiter: AcceptLimiter;
  /** New connections are checked a slice per turn of the event loop (admission.ts). */
  admission: AdmissionQueue;
  /** Resolves a bearer token (header, or `access_token`: EventSource cannot send headers), or the 401 refusal. */
  authenticate: (token: string | undefined) => Promise<Account | Refusal>;
  maxBufferBytes: number;
  /** Batches writes when WRITE_DELAY_MS > 0 (writer.ts). */
  batcher?: WriteBatcher;
  slowPeers: SlowPeers;
  /** Concurrent streams per account (quota.ts): a stream holds a place from its start to its end. */
  quota: StreamQuota;
  /** The tokens streams were opened with, checked again: a revoked one's streams end (tokenRecheck.ts). */
  tokens: TokenRecheck;
  onBackpressure?: () => void;
  /** A failure that is not the client's while the stream starts (loading its topic): logged. A failure while the request is checked is the pipeline's to answer. */
  onError?: (err: unknown) => void;
}

const PING = Buffer.from(': ping\n\n');
const PING_CHUNK = httpChunk(PING);
const RETRY = Buffer.from(`retry: ${SSE_RETRY_MS}\n\n`);

/**
 * One open stream: the hub's subscriber of its topic, writing through its bounded queue
 * (a slow consumer ends it). Methods on a class rather than closures per stream: ten
 * thousand idle streams share one set of functions.
 *
 * The first bytes go through node's `res.write`, which sends the response head with
 * them; every later write goes to the socket itself, already framed as the response's
 * body is (one HTTP/1.1 chunk, from the frame's shared `sseChunk`; the bare event on an
 * HTTP/1.0 response, which is not chunked). `res.write` would frame each event again for
 * every stream (size line, event, CRLF: three pieces, a writev, a tick of corking); here a
 * live event costs each stream one write of one buffer shared by all. The end still goes
 * through `res.end`, which writes the last chunk.
 */
class SseStream implements Subscriber {
  lastSeq = 0;
  private readonly writer: BoundedWriter;
  private readonly chunked: boolean;
  private headOut = false;
  private closed = false;
  /** Gives back the stream's hold on its token (tokenRecheck.ts). */
  private readonly releaseToken: () => void;

  constructor(
    private readonly streams: SseStreams,
    readonly res: ServerResponse,
    socket: Socket,
    private readonly orderId: number,
    /** The account whose quota place the stream holds (given back at its end). */
    private readonly account: number,
    /** The bearer token it was opened with: revoked, the stream ends, and the client's reconnect gets 401. */
    token: string,
  ) {
    this.releaseToken = streams.deps.tokens.hold(token, () => this.end());
    this.chunked = res.chunkedEncoding;
    this.writer = new BoundedWriter(socket, streams.deps.maxBufferBytes, streams.deps.batcher);
  }

  /**
   * The stream's first event: `subscribed`, its `id:` the resume point. Without it a
   * client cut before its first event reconnects with no Last-Event-ID (it has seen no
   * id) and misses what was written while it was away; an id-only block would not do,
   * since eventsource-parser (the `eventsource` package, our SDK) keeps only the ids of
   * events that carry data.
   */
  ack(from: number, head: number): void {
    // `retry:` and `subscribed` leave with the response head in one write (startStream
    // writes nothing before): a client's `open` comes with the resume point, so no cut
    // can fall between the two.
    this.send(Buffer.concat([RETRY, sseFrame({ type: 'subscribed', channel: topicOf(this.orderId), seq: from, head }, from)]));
  }

  write(frame: Frame): void {
    this.send(frame.sse, frame.sseChunk);
  }

  /**
   * The heartbeat (a comment line). Not before the stream's first bytes: those must be
   * `retry:` and `subscribed` leaving with the head (ack), and a subscription still waiting
   * for its topic to load has nothing to keep alive yet.
   */
  ping(): void {
    if (this.headOut) this.send(PING, PING_CHUNK);
  }

  resync(seq: number, reason: ResyncReason): void {
    this.send(sseFrame(resyncMessage(this.orderId, seq, reason), seq));
  }

  /** A hole in delivery: the stream ends and the client resumes with Last-Event-ID. */
  drop(): void {
    this.end();
  }

  /** The topic could not be loaded: come back later. */
  fail(): void {
    this.end(RETRY);
  }

  /** `chunk`: `bytes` as one HTTP/1.1 chunk, when the caller has it ready (shared frames). */
  send(bytes: Buffer, chunk?: Buffer): void {
    if (this.closed) return;
    if (!this.headOut) {
      // The head leaves with the first bytes (node frames them); nothing is held before them.
      this.headOut = true;
      this.res.write(bytes);
      // node:http corks the socket on a response's write until its next tick. Uncorked
      // now, the head goes out and a replay written in this turn meets the writer's bound
      // (what the peer does not take waits, up to MAX_BUFFER_BYTES, then the stream ends as
      // slow) instead of piling up corked in the socket, a whole ring's bytes per stream.
      // node's own uncork on the next tick then finds nothing corked.
      this.res.socket?.uncork();
      return;
    }
    if (this.writer.write(this.chunked ? (chunk ?? httpChunk(bytes)) : bytes) === 'slow') {
      this.streams.deps.onBackpressure?.();
      // The queue is dropped; the end of the response goes right behind what the kernel
      // holds, and the client reconnects with Last-Event-ID and is replayed what it missed.
      const socket = this.res.socket;
      this.end(undefined, true);
      // Like the WebSocket close: the connection ends behind the response (no keep-alive
      // for a slow peer), and SlowPeers destroys it only if the peer never drains.
      if (socket) {
        socket.end();
        this.streams.deps.slowPeers.add(socket);
      }
    }
  }

  /**
   * Ends the stream (and its subscription); `last` goes behind what is already out. What
   * waits for the write delay goes out first, unless the stream ends for being slow (then
   * nothing queued is written: the end goes right behind what the kernel holds).
   */
  end(last?: Buffer, slow = false): void {
    if (this.closed) return;
    this.closed = true;
    this.streams.deps.quota.release(this.account);
    this.releaseToken();
    this.streams.open.delete(this);
    this.streams.deps.hub.unsubscribe(this.orderId, this);
    if (!slow) this.writer.flushDelayed();
    this.writer.stop();
    this.res.end(last);
  }

  /**
   * Shutdown: what is queued is dropped (the client resumes with Last-Event-ID), then `retry:`
   * and the end, and the connection ends behind it. Left open (its head said keep-alive), it
   * would carry the client's reconnect (EventSource's, `retry:` later) to this instance's
   * drain, whose 503 EventSource takes as final; a new connection reaches one that serves. A
   * request pipelined behind the stream keeps the connection for its turn: node has given it
   * the socket by the time the stream's 'finish' comes, and its 503 closes the connection.
   */
  goAway(): void {
    const socket = this.res.socket;
    this.end(RETRY);
    this.res.once('finish', () => {
      if (socket && !responseOn(socket)) socket.end();
    });
  }
}

export class SseStreams {
  /** Each open stream. */
  readonly open = new Set<SseStream>();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    readonly deps: SseDeps,
    heartbeatMs: number,
  ) {
    this.heartbeat = setInterval(() => {
      for (const stream of this.open) stream.ping(); // a slow stream's ping waits its turn (or ends it)
    }, heartbeatMs);
    this.heartbeat.unref();
  }

  /** Cuts every stream as a network failure would (tests, and operators shedding load). */
  dropAll(): void {
    for (const stream of this.open) stream.res.destroy();
  }

  /** Shutdown: tell every client to come back (retry:) and end its stream. */
  close(): void {
    clearInterval(this.heartbeat);
    for (const stream of this.open) stream.goAway();
    this.open.clear();
  }
}

/** What a stream request carries, read from the request by the stream route. */
interface StreamRequest {
  /** The path's order id segment (not yet checked). */
  id: string;
  authorization: string | undefined;
  accessToken: unknown;
  lastEventId: string | undefined;
  accept: string | undefined;
  /** A HEAD: answered as its GET would be, without spending the accept limiter's admission. */
  head: boolean;
  /** Whether the client is still there (checked when its turn comes: one that left is not checked). */
  alive: () => boolean;
}

/**
 * The status logged for a stream whose client left before it started (never sent: there is
 * no one to send it to). 499 is the code nginx logs for a client that closed its request.
 */
const CLIENT_CLOSED = 499;
const GONE = Symbol('client gone');

interface Admitted {
  account: number;
  /** The bearer token that authenticated the request. */
  token: string;
  orderId: number;
  /** Last-Event-ID: the stream continues after it; undefined: live only. */
  since: number | undefined;
  revision: number;
}

/** What a stream answers; a request whose Accept does not admit it gets 406. */
const EVENT_STREAM = 'text/event-stream';

/**
 * The checks of a stream request, in this order: the shutdown's 503, a token sent twice (400),
 * none or a bad one (401), an id not in canonical form (400), no such order (404), an Accept
 * that refuses the stream (406), a bad Last-Event-ID (400), then the quota and the accept
 * limiter (429, 503).
 */
async function admit(deps: SseDeps, r: StreamRequest): Promise<Admitted | Refusal | typeof GONE> {
  const open = await deps.admission.turn(r.alive);
  if (!r.alive()) return GONE;
  if (!open) return shuttingDown();
  const token = streamToken(r.authorization, r.accessToken);
  if (token === undefined) return missingToken();
  if (typeof token !== 'string') return token;
  const account = await deps.authenticate(token);
  if (isRefusal(account)) return account;
  const orderId = parseOrderId(r.id);
  // One URL per resource, as on REST (`/orders/01` is 400 there): an id not in canonical form names no order.
  if (orderId === null) {
    return refusal('VALIDATION_FAILED', 'Invalid path parameter orderId', undefined, {
      errors: [{ pointer: 'path:orderId', rule: 'integer', message: 'must be a positive integer in canonical decimal form (no sign, no leading zero)' }],
    });
  }
  const order = await deps.store.getOrder(account.id, orderId);
  if (!order) return refusal('NOT_FOUND', 'No such order');
  if (!acceptsType(r.accept, EVENT_STREAM)) return refusal('NOT_ACCEPTABLE', `This is an event stream: Accept must admit ${EVENT_STREAM}`);
  // Sent empty, it is judged like any other value (a 400), as every empty header field is: EventSource never sends one.
  const lastEventId = r.lastEventId;
  if (lastEventId !== undefined && !SEQ_TEXT.test(lastEventId.trim())) return refusal('BAD_REQUEST', `Last-Event-ID must be ${SEQ_RULE}`);
  // The place itself is taken once the stream starts (sseRoute).
  const refused = lastChecks(deps, account.id, r.head);
  if (refused) return refused;
  // Last-Event-ID 0 means "seen nothing": replay from seq 1, as WebSocket since 0 does.
  return { account: account.id, token, orderId, since: lastEventId === undefined ? undefined : Number(lastEventId), revision: order.revision };
}

/** A shared listener (no closure per stream): the request's stream ends when its connection closes. */
const streamOf = new WeakMap<IncomingMessage, SseStream>();
function onRequestClose(this: IncomingMessage): void {
  streamOf.get(this)?.end();
}

/**
 * Sets the head and subscribes; resolves once the subscription is set up (replay written),
 * to whether the stream started (false: its client had gone).
 * The head goes out with the first write, `retry:` and `subscribed` (SseStream.ack), or
 * with `retry:` alone when the topic cannot be loaded (fail): node:http sends a head
 * set with writeHead only with the body's first bytes.
 */
async function startStream(streams: SseStreams, x: Exchange, vary: string | undefined, a: Admitted, alive: () => boolean): Promise<boolean> {
  const { req, res } = x;
  const socket = res.socket;
  // The client may have gone while the request was checked (reset, or its side closed: node then
  // ends the request and the socket): its 'close' has passed, so nothing would end the stream.
  if (!socket || req.destroyed || !alive()) return false;
  writeStreamHead(x, vary);
  const stream = new SseStream(streams, res, socket, a.orderId, a.account, a.token);
  streams.open.add(stream);
  streamOf.set(req, stream);
  req.on('close', onRequestClose); // 'close' comes once; `on` spares the once-wrapper per stream
  await streams.deps.hub.subscribe(a.orderId, a.since, stream, a.revision);
  return true;
}

/** A `Connection` field with the `close` option (RFC 9112 9.6). */
const CLOSE_OPTION = /(?:^|,)\s*close\s*(?:,|$)/i;

/** The fields of a stream's 200, but Vary. */
function pushStreamFields(x: Exchange): void {
  // HTTP/1.0 has no chunked framing: the stream's end is the connection's, and keep-alive
  // would say otherwise (RFC 9112 9.3); a client that sent `Connection: close` gets it
  // back, and the connection ends with the answer (RFC 9112 9.6: a HEAD's at once).
  const { connection } = x.req.headers;
  const closes = x.req.httpVersionMinor === 0 || (connection !== undefined && CLOSE_OPTION.test(connection));
  x.fields.push('Content-Type', 'text/event-stream; charset=utf-8', 'Cache-Control', 'no-cache, no-transform', 'Connection', closes ? 'close' : 'keep-alive', 'X-Accel-Buffering', 'no');
}

/** The head of a stream's 200, sent with its first bytes. */
function writeStreamHead(x: Exchange, vary: string | undefined): void {
  pushStreamFields(x);
  if (vary !== undefined) x.fields.push('Vary', vary);
  x.res.writeHead(200, x.fields);
}

/** The stream route of the request pipeline: GET of the stream path (and HEAD: the same checks and head, no stream). */
export function sseRoute(streams: SseStreams, finalizer: Finalizer): TransportRoute {
  const vary = finalizer.vary(undefined);
  return {
    route: SSE_ROUTE,
    methods: new Set(['GET']),
    matches: (path) => SSE_PATH.test(path),
    async serve(x) {
      const m = SSE_PATH.exec(x.path);
      const req = x.req;
      // A stream request takes no body. One sent is refused unread, before any check spends an
      // admission: 400, and the answer closes the connection (http/respond.ts). Reading it would
      // end the request, which is how a stream learns that its client has gone (startStream).
      if (sendsBody(req)) return sendProblem(finalizer, x, refusal('BAD_REQUEST', 'A stream request takes no body'));
      const query = readQuery(x.search);
      if (isRefusal(query)) return sendProblem(finalizer, x, query);
      const socket = req.socket;
      const alive = () => !socket.destroyed && socket.writable;
      const lastEventId = req.headers['last-event-id'];
      let admitted: Awaited<ReturnType<typeof admit>>;
      try {
        admitted = await admit(streams.deps, {
          id: m ? decodePathSegment(m[1]) : '',
          authorization: req.headers.authorization,
          accessToken: query.access_token,
          lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined, // node joins repeated fields with ", "
          accept: req.headers.accept,
          head: req.method === 'HEAD',
          alive,
        });
      } catch (err) {
        // A failure (a store outage) the pipeline would answer: to no one once the client has left, so 499, as a client gone before.
        if (!alive()) return CLIENT_CLOSED;
        throw err;
      }
      if (admitted === GONE) return CLIENT_CLOSED;
      // A refusal reached after its client left is sent to no one either.
      if (isRefusal(admitted)) return alive() ? sendProblem(finalizer, x, admitted) : CLIENT_CLOSED;
      if (req.method === 'HEAD') {
        pushStreamFields(x);
        return send(finalizer, x, 200, undefined, undefined);
      }
      const { quota } = streams.deps;
      if (!quota.take(admitted.account)) return sendProblem(finalizer, x, quota.refusal());
      // A failure once the head is set is the topic's (the stream says so itself: SseStream.fail); logged, never a 500.
      let started = true;
      try {
        started = await startStream(streams, x, vary, admitted, alive);
      } catch (err) {
        // The head is set but not sent: the stream ends as one whose topic failed (`retry:`, then the
        // end: the client reconnects), giving its place back, instead of a request never answered.
        streams.deps.onError?.(err);
        streamOf.get(req)?.fail();
      }
      // A stream, once made, gives its place back when it ends; none was made for a client that had gone.
      if (!streamOf.has(req)) quota.release(admitted.account);
      return started ? 200 : CLIENT_CLOSED;
    },
  };
}
