/**
 * The floor under the SSE fan-out's "server CPU per delivered message" (bench/realtime.ts
 * peers phase): a bare node:http server that does nothing per delivered message but one
 * `socket.write` of one event built once per publish. No auth, no Koa, no hub, no replay
 * ring, no write queue; the service's response head and first event, so the service's own
 * lean SSE reader reads it, in the same run as the service and better-sse.
 *
 * Why: as for WebSocket (bench/baseline/ws-floor.ts), at 20 messages/s on one topic every
 * delivery is one write system call, and on loopback that call also does the receiver's TCP
 * work and wakes its process. What this server spends per message is what any SSE server
 * that writes each event at once must spend; the rest of a server's figure is its own.
 *
 * The response is HTTP/1.1 chunked as the service's (node's default without a length), so
 * the bytes on the wire are the service's: the event (`id:`, `event:`, `data:`, blank line)
 * is framed as one chunk (size line, event, CRLF) once per publish, and that Buffer is
 * written to each response's socket directly, past node's ServerResponse.write.
 *
 * - `GET /api/orders/<id>/stream`: 200 with the service's headers, then `retry: 2000` and a
 *   `subscribed` event (id 0) in one write, as the service starts a stream.
 * - `POST /publish?channel=order:<id>`: the body (a service message) goes out as one event,
 *   `id:` the channel's next number, `event:` the body's `type`; answers the number of streams.
 * - `GET /metrics`, `GET /healthz`: as every realtime peer (realtimePeer.ts).
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { realtimePeer } from './realtimePeer';

const STREAM = /^\/api\/orders\/([1-9][0-9]*)\/stream$/;
const TYPE = /"type":"([^"]+)"/;
const channels = new Map<string, { sockets: Set<Socket>; seq: number }>();
const all = new Set<ServerResponse>();

const channelOf = (name: string) => {
  let c = channels.get(name);
  if (!c) channels.set(name, (c = { sockets: new Set(), seq: 0 }));
  return c;
};

/** One SSE event as one HTTP/1.1 chunk (RFC 9112 7.1): hex size, CRLF, the event, CRLF. */
function eventChunk(id: number, type: string, data: string): Buffer {
  const event = Buffer.from(`id: ${id}\nevent: ${type}\ndata: ${data}\n\n`);
  return Buffer.concat([Buffer.from(`${event.length.toString(16)}\r\n`), event, Buffer.from('\r\n')]);
}

const { listen } = realtimePeer({
  stream(req, res, url) {
    const m = STREAM.exec(url.pathname);
    if (req.method !== 'GET' || !m || !res.socket) return false;
    const name = `order:${m[1]}`;
    const channel = channelOf(name);
    const socket = res.socket;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // Through node's writer (it sends the head and frames the chunk); later events bypass it.
    res.write(`retry: 2000\n\nid: 0\nevent: subscribed\ndata: ${JSON.stringify({ type: 'subscribed', channel: name, seq: 0, head: channel.seq })}\n\n`);
    channel.sockets.add(socket);
    all.add(res);
    req.once('close', () => {
      channel.sockets.delete(socket);
      all.delete(res);
    });
    return true;
  },
  publish(name, body) {
    const channel = channelOf(name);
    const chunk = eventChunk(++channel.seq, TYPE.exec(body)?.[1] ?? 'message', body);
    for (const socket of channel.sockets) socket.write(chunk);
    return channel.sockets.size;
  },
  dropAll: () => {
    for (const r of all) r.destroy();
  },
});
listen();
