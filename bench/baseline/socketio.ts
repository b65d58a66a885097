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
import { Server } from 'socket.io';
import { realtimePeer } from './realtimePeer';

const { server, listen } = realtimePeer({
  publish(channel, body) {
    io.to(channel).emit('message', JSON.parse(body));
    return io.sockets.adapter.rooms.get(channel)?.size ?? 0;
  },
  dropAll: () => io.disconnectSockets(true),
});

const io = new Server(server, {
  transports: ['websocket'],
  perMessageDeflate: false,
  maxHttpBufferSize: 4096,
  connectionStateRecovery: { maxDisconnectionDuration: 2 * 60 * 1000, skipMiddlewares: true },
});
io.on('connection', (socket) => {
  socket.on('subscribe', (channel: unknown, ack?: (reply: { type: string; channel: string }) => void) => {
    if (typeof channel !== 'string') return;
    void socket.join(channel);
    if (typeof ack === 'function') ack({ type: 'subscribed', channel });
  });
});

listen();
