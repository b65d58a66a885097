/**
 * The realtime capability: the topic hub, SSE and WebSocket endpoints, the accept
 * limiter. `createRealtime` wires them; the app mounts `sse`, the server's 'upgrade'
 * goes to `handleUpgrade`, committed writes go to `publish`.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context, Middleware } from 'koa';
import type { Account, OrderEvent, Store } from '../store';
import { AcceptLimiter } from './acceptLimiter';
import { TopicHub } from './hub';
import { SseStreams, sseMiddleware } from './sse';
import { WsEndpoint } from './ws';

export { TopicHub, type Subscriber } from './hub';
export { AcceptLimiter } from './acceptLimiter';
export { ReplayRing } from './ring';
export { CLOSE_TRY_AGAIN, CLOSE_GOING_AWAY, WS_PATH } from './ws';
export { SSE_RETRY_MS } from './sse';

export interface RealtimeConfig {
  replayRate: number;
  replayWindowS: number;
  maxBufferBytes: number;
  acceptRate: number;
  acceptBurst: number;
}

export interface RealtimeDeps {
  store: Store;
  config: RealtimeConfig;
  authenticateCtx: (ctx: Context) => Promise<Account>;
  authenticateToken: (token: string | undefined) => Promise<Account>;
  onBackpressure?: () => void;
  onError?: (err: unknown) => void;
}

export interface Realtime {
  hub: TopicHub;
  sse: Middleware;
  publish(event: OrderEvent): void;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Sends upgrades of this http server here. */
  attach(server: Server): void;
  /** Shutdown: SSE `retry:` and end, WebSocket close 1001. */
  close(): void;
  stats(): { topics: number; sse: number; ws: number };
  /** Cuts every stream connection without a goodbye, as a network failure would. */
  dropConnections(): void;
}

export function createRealtime(deps: RealtimeDeps): Realtime {
  const { config } = deps;
  const hub = new TopicHub({ store: deps.store, ringSize: config.replayRate * config.replayWindowS, onError: deps.onError });
  const limiter = new AcceptLimiter(config.acceptRate, config.acceptBurst);
  const streams = new SseStreams();
  const common = { store: deps.store, hub, limiter, maxBufferBytes: config.maxBufferBytes, onBackpressure: deps.onBackpressure };
  const ws = new WsEndpoint({ ...common, authenticate: deps.authenticateToken });
  const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => ws.handleUpgrade(req, socket, head);
  return {
    hub,
    sse: sseMiddleware({ ...common, authenticate: deps.authenticateCtx }, streams),
    publish: (event) => hub.publish(event),
    handleUpgrade,
    attach: (server) => void server.on('upgrade', handleUpgrade),
    close() {
      streams.close();
      ws.close();
    },
    dropConnections() {
      streams.dropAll();
      ws.dropAll();
    },
    stats: () => ({ topics: hub.topicCount, sse: streams.open.size, ws: ws.clients }),
  };
}
