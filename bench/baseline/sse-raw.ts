/**
 * The realtime baseline for SSE: a bare node:http server (PORT, HOST) holding
 * `GET /api/orders/<id>/stream` responses open, with the service's response headers and
 * first `retry:` line; no auth, no Koa, no hub.
 *
 * - `POST /publish?channel=order:<id>` writes the body as one `event:`/`data:` frame to that
 *   order's streams, answers the number of streams.
 * - `GET /metrics`: `process_resident_memory_bytes` and `nodejs_heap_size_used_bytes` from
 *   process.memoryUsage() (what the bench reads from the service's /metrics).
 * - `GET /healthz` and `GET /`: 200 (readiness).
 */
import type { ServerResponse } from 'node:http';
import { realtimePeer } from './realtimePeer';

const STREAM = /^\/api\/orders\/([1-9][0-9]*)\/stream$/;
const streams = new Map<string, Set<ServerResponse>>();
const all = new Set<ServerResponse>();

const { listen } = realtimePeer({
  stream(req, res, url) {
    const m = STREAM.exec(url.pathname);
    if (req.method !== 'GET' || !m) return false;
    const channel = `order:${m[1]}`;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write('retry: 2000\n\n');
    let set = streams.get(channel);
    if (!set) streams.set(channel, (set = new Set()));
    set.add(res);
    all.add(res);
    req.once('close', () => {
      set.delete(res);
      all.delete(res);
    });
    return true;
  },
  publish(channel, body) {
    const frame = Buffer.from(`event: message\ndata: ${body}\n\n`);
    const set = streams.get(channel) ?? new Set<ServerResponse>();
    for (const r of set) r.write(frame);
    return set.size;
  },
  dropAll: () => {
    for (const r of all) r.destroy();
  },
});
listen();
