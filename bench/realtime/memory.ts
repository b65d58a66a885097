/** Idle memory per open connection: the service vs the bare servers, each started fresh. */
import { metric } from '../lib/prometheus';
import { type OpenResult } from '../lib/realtime-client';
import { pidOfPort, rssOf } from '../lib/realtime-proc';
import { type Running, startService } from '../lib/server';
import { Clients } from './clients';
import { type Row } from './rows';
import { portOf, scrape, startPeer, startRaw, tokenOf, withServer } from './servers';
import { CONNECTIONS, KINDS, ORDERS, PEERS, SAMPLES, SERVICE_ENV, SETTLE_S, WARM_CONNECTIONS, log, median, sleep } from './settings';
// ---- memory -----------------------------------------------------------------------------------

export interface MemSample {
  rss: number;
  heap: number;
}

export interface MemResult {
  before: MemSample;
  after: MemSample;
  open: OpenResult;
  live: number;
  rssPerConn: number;
  heapPerConn: number;
}

export async function sampleMemory(srv: Running, pid: number): Promise<MemSample> {
  const rss: number[] = [];
  const heap: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    if (i) await sleep(500);
    rss.push(rssOf(pid));
    heap.push(metric(await scrape(srv), 'nodejs_heap_size_used_bytes') ?? NaN);
  }
  return { rss: median(rss), heap: median(heap) };
}

export type MemSide = 'service' | 'baseline' | 'peer';

/**
 * `graphql`: the WebSocket connections are GraphQL subscriptions (graphql-transport-ws on
 * /graphql, the `gql-lean` client) to the server `start` gives (the service, or a graphql-ws peer).
 */
export async function idleMemory(clients: Clients, kind: 'ws' | 'sse', side: MemSide, graphql?: { start: () => Promise<Running> }): Promise<MemResult> {
  const start = graphql?.start ?? (side === 'service' ? () => startService(SERVICE_ENV) : side === 'peer' ? startPeer(kind) : startRaw(kind));
  return withServer(start, async (srv) => {
    const token = side === 'service' ? await tokenOf(srv) : 'none';
    const pid = pidOfPort(portOf(srv));
    const open = (group: string, n: number) =>
      kind === 'ws'
        ? clients.openWs(
            group,
            srv,
            token,
            Array.from({ length: n }, (_, i) => `order:${(i % ORDERS) + 1}`),
            graphql ? 'gql-lean' : side === 'peer' ? 'sio' : 'ws',
          )
        : clients.openSse(
            group,
            srv,
            token,
            Array.from({ length: n }, (_, i) => `/api/orders/${(i % ORDERS) + 1}/stream`),
          );
    // Warm-up: the code paths of accepting, subscribing and closing run before the "before" sample.
    const warm = await open('warm', WARM_CONNECTIONS);
    if (warm.failed) throw new Error(`${side} ${kind}: ${warm.failed} warm-up connections failed: ${warm.firstError}`);
    await clients.all({ cmd: 'close', group: 'warm' });
    await sleep(2000);
    const before = await sampleMemory(srv, pid);
    const opened = await open('idle', CONNECTIONS);
    log(`${side} ${kind}${graphql ? ' (GraphQL subscriptions)' : ''}: opened ${opened.opened}/${CONNECTIONS} in ${opened.ms} ms${opened.failed ? `, ${opened.failed} failed (${opened.firstError})` : ''}`);
    await sleep(SETTLE_S * 1000);
    const after = await sampleMemory(srv, pid);
    const live = (await clients.stats()).live.idle ?? 0;
    await clients.all({ cmd: 'close', group: 'idle' });
    const n = opened.opened || 1;
    const r = { before, after, open: opened, live, rssPerConn: (after.rss - before.rss) / n, heapPerConn: (after.heap - before.heap) / n };
    log(
      `${side} ${kind}${graphql ? ' (GraphQL subscriptions)' : ''}: RSS ${mb(before.rss)} -> ${mb(after.rss)} MB = ${Math.round(r.rssPerConn)} B/conn; heap ${mb(before.heap)} -> ${mb(after.heap)} MB = ${Math.round(r.heapPerConn)} B/conn; ${live} still open`,
    );
    return r;
  });
}

export const mb = (b: number) => (b / 1048576).toFixed(1);
export const kb = (b: number) => `${(b / 1024).toFixed(1)} KB`;

export async function memoryPhase(clients: Clients): Promise<Row[]> {
  const rows: Row[] = [];
  for (const kind of KINDS) {
    const svc = await idleMemory(clients, kind, 'service');
    const base = await idleMemory(clients, kind, 'baseline');
    const peer = PEERS ? await idleMemory(clients, kind, 'peer') : undefined;
    const label = kind === 'ws' ? 'WebSocket /orders' : 'SSE GET /api/orders/{id}/stream';
    const fig = (m: MemResult) => `${kb(m.rssPerConn)} RSS (heap ${kb(m.heapPerConn)}) per conn`;
    rows.push({
      scenario: `${kind}-idle-memory`,
      service: `${label}: ${svc.open.opened} idle subscribed connections (orders 1-5), RSS delta / connections`,
      baseline: kind === 'ws' ? 'bare `ws` WebSocketServer (bench/baseline/ws-raw.ts), same connections and subscribe messages' : 'bare node:http server holding the same SSE responses (bench/baseline/sse-raw.ts)',
      serviceFig: fig(svc),
      baselineFig: fig(base),
      ratio: svc.rssPerConn / base.rssPerConn,
      goal: `<= 10 KB per connection (${svc.rssPerConn <= 10_240 ? 'met' : 'missed'})`,
      notes:
        `service RSS ${mb(svc.before.rss)} -> ${mb(svc.after.rss)} MB, heap ${mb(svc.before.heap)} -> ${mb(svc.after.heap)} MB, ` +
        `opened in ${(svc.open.ms / 1000).toFixed(1)} s${svc.open.failed ? `, ${svc.open.failed} failed` : ''}, ${svc.live} open at the end; ` +
        `baseline RSS ${mb(base.before.rss)} -> ${mb(base.after.rss)} MB, heap ${mb(base.before.heap)} -> ${mb(base.after.heap)} MB` +
        `${base.open.failed ? `, ${base.open.failed} failed` : ''}`,
    });
    if (peer) {
      rows.push({
        scenario: `${kind}-idle-memory-peer`,
        service: `as ${kind}-idle-memory (same service run)`,
        baseline:
          kind === 'ws'
            ? 'Socket.IO 4 (bench/baseline/socketio.ts: connectionStateRecovery on, websocket transport), socket.io-client connections joined to the same rooms'
            : 'better-sse (bench/baseline/better-sse.ts): a session per stream registered to a channel per order',
        serviceFig: fig(svc),
        baselineFig: fig(peer),
        ratio: svc.rssPerConn / peer.rssPerConn,
        goal: 'reference: the library users would pick instead (ratio = service / peer, lower is better)',
        notes:
          `peer RSS ${mb(peer.before.rss)} -> ${mb(peer.after.rss)} MB, heap ${mb(peer.before.heap)} -> ${mb(peer.after.heap)} MB, opened ${peer.open.opened}` +
          ` in ${(peer.open.ms / 1000).toFixed(1)} s${peer.open.failed ? `, ${peer.open.failed} failed (${peer.open.firstError})` : ''}, ${peer.live} open at the end`,
      });
    }
  }
  return rows;
}
