/**
 * The realtime capability: the topic hub, SSE and WebSocket endpoints, the accept
 * limiter. `createRealtime` wires them; the pipeline serves `sseRoute`, the server's 'upgrade'
 * goes to `handleUpgrade`, committed writes go to `publish`.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { afterPendingResponses, DRAIN_GRACE_MS, ignoreUpgrade, isWebSocketHandshake, noteArrival, type Finalizer, type RawAnswerLog, type Refusal, type TransportRoute } from '../http';
import { StoreUnavailableError, type Account, type OrderEvent, type Store } from '../store';
import type { Bus } from '../bus';
import { AcceptLimiter } from './acceptLimiter';
import { AdmissionQueue } from './admission';
import { TopicHub } from './hub';
import { SlowPeers } from './slowPeers';
import { StreamQuota } from './quota';
import { TokenRecheck } from './tokenRecheck';
import type { WsHeartbeat } from './heartbeat';
import { SseStreams, sseRoute } from './sse';
import { WriteBatcher } from './writer';
import { WsEndpoint, type WsProtocol } from './ws';

export { TopicHub, type Subscriber } from './hub';
export { AcceptLimiter } from './acceptLimiter';
export { AdmissionQueue } from './admission';
export { ReplayRing, RingBudget } from './ring';
export { CLOSE_TRY_AGAIN, CLOSE_GOING_AWAY, WS_PATH, type WsConnection, type WsProtocol } from './ws';
export { topicOf, wsFrame, wsTextFrame, type Frame } from './frames';
export { SSE_RETRY_MS } from './sse';

/**
 * New stream connections checked per turn of the event loop (admission.ts). A check costs
 * about 0.2 ms, so a turn spends about a millisecond on them before it goes back to the
 * requests of open connections and accepts the next connection (libuv accepts one per
 * turn). In the reconnect storm bench (10,000 WebSocket subscribers, BENCHMARKS.md
 * "Reliability") 4 a turn brought the probe's p99 under 100 ms in 7 of 8 storms (32 a turn:
 * 2 of 16; no queue: 0 of 8), though not in every run.
 */
export const ADMISSIONS_PER_TURN = 4;

export interface RealtimeConfig {
  replayRate: number;
  replayWindowS: number;
  /** Bytes all replay rings may hold together (REPLAY_MAX_BYTES); over it the largest rings lose their oldest events. */
  replayMaxBytes: number;
  maxBufferBytes: number;
  /** 0: every stream write goes out at once; > 0: writes are batched per connection for up to this long (writer.ts). */
  writeDelayMs: number;
  /** Seconds between SSE comment heartbeats (`: ping`), which keep proxies from closing an idle stream. */
  sseHeartbeatS: number;
  /** Concurrent streams (SSE, WebSocket) per account and process (quota.ts); 0: no cap. */
  maxStreamsPerAccount: number;
  /** Subscriptions one WebSocket connection may hold at once (`/orders` channels, GraphQL subscriptions): each holds a subscriber and its state. */
  maxSubscriptionsPerConnection: number;
  /** Seconds between WebSocket pings; a connection that left the last one unanswered is cut (heartbeat.ts). 0: none. */
  wsHeartbeatS: number;
  /** Seconds between checks of the tokens open streams were opened with; a revoked one's streams end (tokenRecheck.ts). 0: never. */
  streamTokenRecheckS: number;
  acceptRate: number;
  acceptBurst: number;
}

export interface RealtimeDeps {
  store: Store;
  /** Brings every instance's committed events to this hub (MemoryBus in one process, RedisBus scaled out). */
  bus: Bus;
  config: RealtimeConfig;
  /** Resolves a bearer token (header or `access_token`), or the 401 refusal: WebSocket upgrades and SSE streams. */
  authenticateToken: (token: string | undefined) => Promise<Account | Refusal>;
  onBackpressure?: () => void;
  /** A WebSocket connection was cut for leaving a ping unanswered. */
  onHeartbeatTimeout?: () => void;
  onError?: (err: unknown) => void;
  /** Told of each refused WebSocket handshake, for its log line and metric. */
  logAnswer?: RawAnswerLog;
  /** Milliseconds clock of the accept limiter and the slow-peer sweep (tests inject one). */
  now?: () => number;
}

export interface Realtime {
  hub: TopicHub;
  /** The SSE stream route of the request pipeline (http/pipeline.ts). */
  sseRoute(finalizer: Finalizer): TransportRoute;
  /** A committed write's event: to every instance's hub through the bus, this one first. */
  publish(event: OrderEvent): void;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Sends upgrades of this http server here. */
  attach(server: Server): void;
  /** Serves another protocol's WebSocket upgrades on `path`, on the same limiter, bearer rule and bounded queues. */
  mount(path: string, protocol: WsProtocol): void;
  /** Shutdown: SSE `retry:` and end, WebSocket close 1001; upgrades waiting their turn are refused 503. */
  close(): void;
  stats(): { topics: number; sse: number; ws: number };
  /** Cuts every stream connection without a goodbye, as a network failure would. */
  dropConnections(): void;
  /** Connections closed as slow consumers whose sockets wait for the peer to read its way to the goodbye. */
  readonly slowPeers: SlowPeers;
  /** WebSocket pings and the cut of connections that stopped answering them. */
  readonly wsHeartbeat: WsHeartbeat;
  /** The tokens of open streams, checked again (a revoked one's streams end). */
  readonly tokenRecheck: TokenRecheck;
}

/**
 * How often the hub compares its rings with the store (hub.ts `reconcile`): the longest an
 * event whose bus message was lost with its writer waits before its subscribers get it.
 */
export const RECONCILE_MS = 30_000;

export function createRealtime(deps: RealtimeDeps): Realtime {
  const { config } = deps;
  const hub = new TopicHub({ store: deps.store, bus: deps.bus, ringSize: config.replayRate * config.replayWindowS, ringMaxBytes: config.replayMaxBytes, onError: deps.onError });
  deps.bus.listen({ event: (event) => hub.publish(event), reconnected: () => void hub.catchUpAll() });
  const now = deps.now ?? (() => performance.now());
  const limiter = new AcceptLimiter(config.acceptRate, config.acceptBurst, now);
  const admission = new AdmissionQueue(ADMISSIONS_PER_TURN);
  const slowPeers = new SlowPeers(now);
  const quota = new StreamQuota(config.maxStreamsPerAccount);
  const tokens = new TokenRecheck((token) => deps.authenticateToken(token), config.streamTokenRecheckS * 1000, deps.onError);
  const batcher = config.writeDelayMs > 0 ? new WriteBatcher(config.writeDelayMs) : undefined;
  const common = { store: deps.store, hub, limiter, admission, slowPeers, quota, tokens, maxBufferBytes: config.maxBufferBytes, batcher, onBackpressure: deps.onBackpressure };
  const streams = new SseStreams({ ...common, authenticate: deps.authenticateToken, onError: deps.onError }, config.sseHeartbeatS * 1000);
  const ws = new WsEndpoint({
    ...common,
    authenticate: deps.authenticateToken,
    onError: deps.onError,
    heartbeatMs: config.wsHeartbeatS * 1000,
    maxSubscriptions: config.maxSubscriptionsPerConnection,
    onHeartbeatTimeout: deps.onHeartbeatTimeout,
    logAnswer: deps.logAnswer,
  });
  const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => ws.handleUpgrade(req, socket, head);
  // A store outage is reported by the requests that meet it; the next round tries again.
  // One round at a time: a store slower than the interval skips rounds rather than stacking them.
  let round: Promise<void> | undefined;
  let closed = false;
  const reconciling = setInterval(() => {
    round ??= hub
      .reconcile()
      // A round still running at close meets a closed store: not an error to report.
      .catch((err: unknown) => void (closed || err instanceof StoreUnavailableError || deps.onError?.(err)))
      .finally(() => (round = undefined));
  }, RECONCILE_MS);
  reconciling.unref();
  return {
    hub,
    slowPeers,
    wsHeartbeat: ws.heartbeat,
    tokenRecheck: tokens,
    sseRoute: (finalizer) => sseRoute(streams, finalizer),
    publish: (event) => deps.bus.publish(event),
    handleUpgrade,
    // A request whose Upgrade is not a WebSocket handshake (h2c, ...) is served as plain HTTP (http/upgrade.ts).
    // A handshake pipelined behind other requests is taken once their answers are sent: its 101 comes after them, in order.
    attach: (server) =>
      void server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
        // Its log line and metric count from here: the wait for its turn and its token check are part of its answer.
        (noteArrival(req), isWebSocketHandshake(req)) ? afterPendingResponses(socket, () => handleUpgrade(req, socket, head)) : ignoreUpgrade(server, req, socket, head),
      ),
    mount: (path, protocol) => ws.mount(path, protocol),
    close() {
      closed = true;
      clearInterval(reconciling);
      tokens.close();
      admission.close();
      const sseSockets = [...streams.open].flatMap((stream) => (stream.res.socket ? [stream.res.socket] : []));
      streams.close();
      ws.close();
      slowPeers.close();
      // A client that neither reads its goodbye nor answers the close frame (frozen, partitioned)
      // would hold the drain until the process is forced out (exit 1, every in-flight request
      // cut): its connection is cut once it has had the grace idle keep-alive connections get.
      const cut = setTimeout(() => {
        ws.dropAll();
        for (const socket of sseSockets) socket.destroy();
        slowPeers.destroyAll();
      }, DRAIN_GRACE_MS); // the drain's grace for idle connections
      cut.unref();
    },
    dropConnections() {
      streams.dropAll();
      ws.dropAll();
    },
    stats: () => ({ topics: hub.topicCount, sse: streams.open.size, ws: ws.clients }),
  };
}
