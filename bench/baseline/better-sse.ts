/**
 * The realtime peer for SSE: better-sse (npm), the maintained SSE library for node:http,
 * used as its docs show: a session per request (`createSession`), a channel per topic
 * (`createChannel`), `channel.broadcast(data, eventName)`; `retry` 2000 ms as ours,
 * keep-alive every 15 s as our heartbeat. No auth.
 *
 * - `GET /api/orders/<id>/stream`: a session registered to channel `order:<id>`.
 * - `POST /publish?channel=order:<id>`: the JSON body broadcast as `order.updated` to the
 *   channel's sessions, answers their number.
 * - `GET /metrics`: `process_resident_memory_bytes` and `nodejs_heap_size_used_bytes`;
 *   `GET /healthz` and `GET /`: 200 (readiness).
 */
import { createChannel, createSession, type Channel } from 'better-sse';
import { realtimePeer } from './realtimePeer';

const STREAM = /^\/api\/orders\/([1-9][0-9]*)\/stream$/;
const channels = new Map<string, Channel>();
const channelOf = (name: string): Channel => {
  let c = channels.get(name);
  if (!c) channels.set(name, (c = createChannel()));
  return c;
};

const { server, listen } = realtimePeer({
  stream(req, res, url) {
    const m = STREAM.exec(url.pathname);
    if (req.method !== 'GET' || !m) return false;
    createSession(req, res, { retry: 2000, keepAlive: 15_000, headers: { 'x-accel-buffering': 'no' } }).then(
      (session) => channelOf(`order:${m[1]}`).register(session),
      () => res.destroy(),
    );
    return true;
  },
  publish(channel, body) {
    const c = channelOf(channel);
    c.broadcast(JSON.parse(body), 'order.updated');
    return c.sessionCount;
  },
  dropAll: () => server.closeAllConnections(),
});
listen();
