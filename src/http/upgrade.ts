/**
 * Requests that carry an `Upgrade` header but are not a WebSocket handshake (`curl --http2`
 * sends `Upgrade: h2c` on a plain GET). Once the server listens for 'upgrade' (the
 * WebSocket endpoints do, realtime/index.ts), node:http hands every request with an
 * `Upgrade` header to that listener, detached from the HTTP parser: without more, such a
 * request would never reach the pipeline. RFC 9110 7.8 lets a server ignore `Upgrade`, and
 * that is what the service does: the request is given back to node:http as it was sent,
 * minus `Upgrade`, the `upgrade` token of `Connection` and `HTTP2-Settings`, and is
 * served by the pipeline like any other (body, keep-alive and all).
 *
 * Known limit: a client that pipelines such a request behind another whose answer is
 * still being written loses the connection (node:http cannot attach a second parser to
 * a socket with a response in flight); browsers and curl do not pipeline.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';

/** A WebSocket opening handshake (RFC 6455 4.1): a GET whose `Upgrade` is `websocket`. Anything else ignores its `Upgrade`. */
export function isWebSocketHandshake(req: IncomingMessage): boolean {
  return req.method === 'GET' && req.headers.upgrade?.trim().toLowerCase() === 'websocket';
}

/** Connection options that only name the upgrade: dropped with it. */
const UPGRADE_ONLY = /^(?:upgrade|http2-settings)$/i;

/**
 * Serves `req` as an ordinary request on `server`: its head is written again without the
 * upgrade fields, put back in front of the bytes that followed it, and the socket is
 * handed to node:http as a new connection. Header values are written back in latin1, the
 * encoding node:http read them in, so they reach the parser byte for byte.
 */
export function ignoreUpgrade(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/${req.httpVersion}`];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (name === 'upgrade' || name === 'http2-settings') continue;
    if (name === 'connection') {
      const kept = raw[i + 1]
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== '' && !UPGRADE_ONLY.test(t));
      if (kept.length > 0) lines.push(`${raw[i]}: ${kept.join(', ')}`);
      continue;
    }
    lines.push(`${raw[i]}: ${raw[i + 1]}`);
  }
  socket.unshift(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]));
  server.emit('connection', socket);
}
