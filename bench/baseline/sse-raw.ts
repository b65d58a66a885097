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
import { createServer, type ServerResponse } from 'node:http';

const STREAM = /^\/api\/orders\/([1-9][0-9]*)\/stream$/;
const streams = new Map<string, Set<ServerResponse>>();
const all = new Set<ServerResponse>();

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const m = STREAM.exec(url.pathname);
  if (req.method === 'GET' && m) {
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
    return;
  }
  if (req.method === 'POST' && url.pathname === '/publish') {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const frame = Buffer.from(`event: message\ndata: ${Buffer.concat(chunks).toString()}\n\n`);
      const set = streams.get(url.searchParams.get('channel') ?? '') ?? new Set<ServerResponse>();
      for (const r of set) r.write(frame);
      res.end(String(set.size));
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
  for (const r of all) r.destroy();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
