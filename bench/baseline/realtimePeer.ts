/**
 * The node:http part every realtime peer of bench/baseline shares, so each peer file holds
 * only what makes it that peer (its streams and its broadcast):
 * - `POST /publish?channel=<name>`: the request body goes to `publish`, the answer is the
 *   number of receivers it returns;
 * - `GET /metrics`: `process_resident_memory_bytes` and `nodejs_heap_size_used_bytes` from
 *   process.memoryUsage() (the two figures the bench reads from the service's /metrics);
 * - `GET /healthz` and `GET /`: 200 (readiness); anything else 404;
 * - `listen()` on PORT and HOST, printing the URL the bench waits for; SIGTERM and SIGINT
 *   drop every connection (`dropAll`) and exit.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface PeerRoutes {
  /** Serves a stream request and returns true, or returns false to leave the request to the shared routes. */
  stream?: (req: IncomingMessage, res: ServerResponse, url: URL) => boolean;
  /** Sends `body` to every receiver of `channel`; returns how many there are. */
  publish: (channel: string, body: string) => number;
  /** Shutdown: cut every open connection. */
  dropAll: () => void;
}

export function realtimePeer(routes: PeerRoutes): { server: Server; listen: () => void } {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (routes.stream?.(req, res, url)) return;
    if (req.method === 'POST' && url.pathname === '/publish') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.end(String(routes.publish(url.searchParams.get('channel') ?? '', Buffer.concat(chunks).toString()))));
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
  const listen = () => {
    const host = process.env.HOST || '127.0.0.1';
    server.listen(Number(process.env.PORT ?? 0), host, () => {
      const addr = server.address() as { port: number };
      process.stdout.write(`listening on http://${host}:${addr.port}\n`);
    });
    const stop = () => {
      routes.dropAll();
      server.close(() => process.exit(0));
      setTimeout(() => process.exit(0), 2000).unref();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  };
  return { server, listen };
}
