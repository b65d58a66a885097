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
import { createServer } from 'node:http';
import { createChannel, createSession, type Channel } from 'better-sse';

const STREAM = /^\/api\/orders\/([1-9][0-9]*)\/stream$/;
const channels = new Map<string, Channel>();
const channelOf = (name: string): Channel => {
  let c = channels.get(name);
  if (!c) channels.set(name, (c = createChannel()));
  return c;
};

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const m = STREAM.exec(url.pathname);
  if (req.method === 'GET' && m) {
    createSession(req, res, { retry: 2000, keepAlive: 15_000, headers: { 'x-accel-buffering': 'no' } }).then(
      (session) => channelOf(`order:${m[1]}`).register(session),
      () => res.destroy(),
    );
    return;
  }
  if (req.method === 'POST' && url.pathname === '/publish') {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const channel = channelOf(url.searchParams.get('channel') ?? '');
      channel.broadcast(JSON.parse(Buffer.concat(chunks).toString()), 'order.updated');
      res.end(String(channel.sessionCount));
    });
    return;
  }
  if (req.method === 'GET' && url.pathname === '/metrics') {
    const mem = process.memoryUsage();
    res.setHeader('content-type', 'text/plain; version=0.0.4');
    res.end(`process_resident_memory_bytes ${mem.rss}\nnodejs_heap_size_used_bytes ${mem.heapUsed}\n`);
    return;
  }
  if (req.method === 'GET' && (url.pathname === '/' || url.pathname === '/healthz')) {
    res.end('ok');
    return;
  }
  res.statusCode = 404;
  res.end();
});

const host = process.env.HOST || '127.0.0.1';
server.listen(Number(process.env.PORT ?? 0), host, () => {
  const addr = server.address() as { port: number };
  process.stdout.write(`listening on http://${host}:${addr.port}\n`);
});
const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
