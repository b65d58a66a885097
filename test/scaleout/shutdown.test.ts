/**
 * SIGTERM with a stream client that takes no goodbye: a WebSocket client that stopped
 * reading (frozen, partitioned) never answers the 1001 close frame. The process still
 * drains and exits 0 once that client has had its grace, instead of being forced out
 * after 10 s with exit 1 (which a supervisor records as a failed stop).
 */
import { connect } from 'node:net';
import { startInstance } from '../support/instances';

jest.setTimeout(60_000);

it('exits 0 on SIGTERM though a WebSocket client never answers its close frame', async () => {
  const srv = await startInstance({});
  const { port } = new URL(srv.url);
  const socket = connect(Number(port), '127.0.0.1');
  try {
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const upgraded = new Promise<string>((resolve) => socket.once('data', (d: Buffer) => resolve(d.toString('latin1'))));
    socket.write(`GET /orders?access_token=${srv.alice.token} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    expect(await upgraded).toMatch(/^HTTP\/1\.1 101 /);
    socket.pause(); // reads nothing more, answers nothing: the close frame waits in the kernel
    expect(await srv.kill('SIGTERM')).toBe(0);
  } finally {
    socket.destroy();
  }
});
