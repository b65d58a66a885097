/**
 * The realtime peer for WebSocket: Socket.IO 4 (bench/baseline), as its docs set up a push
 * service with resume: `connectionStateRecovery` on (the packets of the last 2 minutes are
 * kept and replayed to a client that reconnects, our replay ring's counterpart), the
 * `websocket` transport only (no long-polling upgrade), no per-message deflate. No auth.
 *
 * - A client emits `subscribe` with a channel (`order:<id>`) and an ack callback; the server
 *   joins it to that room and acks.
 * - `POST /publish?channel=order:<id>`: the JSON body is emitted as `message` to the room
 *   (`io.to(channel).emit`: Socket.IO encodes a broadcast once for all its sockets), answers
 *   the number of sockets in the room.
 * - `GET /metrics`: `process_resident_memory_bytes` and `nodejs_heap_size_used_bytes`;
 *   `GET /healthz` and `GET /`: 200 (readiness).
 */
import { createServer } from 'node:http';
import { Server } from 'socket.io';

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (req.method === 'POST' && url.pathname === '/publish') {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const channel = url.searchParams.get('channel') ?? '';
      io.to(channel).emit('message', JSON.parse(Buffer.concat(chunks).toString()));
      res.end(String(io.sockets.adapter.rooms.get(channel)?.size ?? 0));
    });
    return;
  }
  if (req.method === 'GET' && url.pathname === '/metrics') {
    const m = process.memoryUsage();
    res.setHeader('content-type', 'text/plain; version=0.0.4');
    res.end(`process_resident_memory_bytes ${m.rss}\nnodejs_heap_size_used_bytes ${m.heapUsed}\n`);
    return;
  }
  if (req.method === 'GET' && (url.pathname === '/' || url.pathname === '/healthz')) {
    res.end('ok');
    return;
  }
  res.statusCode = 404;
  res.end();
});

const io = new Server(server, {
  transports: ['websocket'],
  perMessageDeflate: false,
  maxHttpBufferSize: 4096,
  connectionStateRecovery: { maxDisconnectionDuration: 2 * 60 * 1000, skipMiddlewares: true },
});
io.on('connection', (socket) => {
  socket.on('subscribe', (channel: unknown, ack: unknown) => {
    if (typeof channel !== 'string') return;
    void socket.join(channel);
    if (typeof ack === 'function') ack({ type: 'subscribed', channel });
  });
});

const host = process.env.HOST || '127.0.0.1';
server.listen(Number(process.env.PORT ?? 0), host, () => {
  const addr = server.address() as { port: number };
  process.stdout.write(`listening on http://${host}:${addr.port}\n`);
});
const stop = () => {
  io.disconnectSockets(true);
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
