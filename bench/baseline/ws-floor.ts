/**
 * The floor under the fan-out's "server CPU per delivered message" (bench/realtime.ts
 * peers phase): a `ws` server that does nothing per delivered message but one
 * `socket.write` of one frame built once per publish. No auth, no hub, no replay ring, no
 * write queue; the same handshake and `subscribe` protocol as bench/baseline/ws-raw.ts, so
 * the service's own lean clients read it, in the same run as the service and Socket.IO.
 *
 * Why: at 20 messages/s on one topic no two messages reach a socket within a tick, so every
 * delivery is one write system call, and on loopback that call also does the receiver's
 * TCP work and wakes its process. What this server spends per message is what any server
 * that writes each message at once must spend; the rest of a server's figure is its own.
 *
 * - `POST /publish?channel=order:1`: the body, framed once (a text frame), is written to
 *   each of the channel's sockets; answers the number of sockets.
 * - `GET /metrics`, `GET /healthz`: as every realtime peer (realtimePeer.ts).
 */
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { realtimePeer } from './realtimePeer';
import { serveChannels } from './ws-channels';

const channels = new Map<string, Set<Duplex>>();

/** An unmasked text frame (RFC 6455 5.2) for a payload under 64 KiB. */
function textFrame(payload: Buffer): Buffer {
  const head = payload.length < 126 ? Buffer.from([0x81, payload.length]) : Buffer.from([0x81, 126, payload.length >> 8, payload.length & 0xff]);
  return Buffer.concat([head, payload]);
}

const { server, listen } = realtimePeer({
  publish(channel, payload) {
    const subs = channels.get(channel) ?? new Set<Duplex>();
    const frame = textFrame(Buffer.from(payload));
    for (const socket of subs) socket.write(frame);
    return subs.size;
  },
  dropAll: () => {
    for (const ws of wss.clients) ws.terminate();
  },
});

const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 4096 });
server.on('upgrade', (req, socket, head) => {
  if (!req.url?.startsWith('/orders')) return socket.destroy();
  wss.handleUpgrade(req, socket, head, (ws) => serveChannels(ws, socket, channels));
});

listen();
