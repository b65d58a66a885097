/**
 * The realtime baseline for WebSocket: a bare `ws` WebSocketServer on node:http (PORT, HOST),
 * no auth, no hub, no replay ring. Speaks just enough of the service's protocol for the
 * bench clients: `{"type":"subscribe","channel":...}` is answered `{"type":"subscribed",...}`
 * and adds the socket to that channel's set.
 *
 * - `POST /publish?channel=order:1` broadcasts the request body (text) to the channel's
 *   sockets with ws's ordinary `client.send()` per client (framed per client), answers the
 *   number of clients.
 * - `GET /metrics` answers the two figures the bench reads from the service's /metrics
 *   (`process_resident_memory_bytes`, `nodejs_heap_size_used_bytes`) from process.memoryUsage().
 * - `GET /healthz` and `GET /`: 200 (readiness).
 */
import { WebSocketServer, type WebSocket } from 'ws';
import { realtimePeer } from './realtimePeer';
import { serveChannels } from './ws-channels';

const channels = new Map<string, Set<WebSocket>>();

const { server, listen } = realtimePeer({
  publish(channel, payload) {
    const subs = channels.get(channel) ?? new Set<WebSocket>();
    for (const ws of subs) ws.send(payload);
    return subs.size;
  },
  dropAll: () => {
    for (const ws of wss.clients) ws.terminate();
  },
});

const wss = new WebSocketServer({ server, path: '/orders', perMessageDeflate: false, maxPayload: 4096 });
wss.on('connection', (ws) => serveChannels(ws, ws, channels));

listen();
