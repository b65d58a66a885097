/**
 * SIGTERM with a stream client that takes no goodbye: a WebSocket client that stopped
 * reading (frozen, partitioned) never answers the 1001 close frame. The process still
 * drains and exits 0 once that client has had its grace, instead of being forced out
 * after 10 s with exit 1 (which a supervisor records as a failed stop).
 */
import { connect } from 'node:net';
import { PG_URL, pgSchema, startInstance, startTcpProxy } from '../support/instances';

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

it('exits 0 on SIGTERM though PostgreSQL stopped answering: the field-read flush and the store close are bounded, the loss logged', async () => {
  const db = pgSchema();
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(PG_URL).port || 5432) });
  const url = new URL(PG_URL);
  url.host = `127.0.0.1:${proxy.port}`;
  // A query timeout past the forced exit's 10 s: without the bound the flush would wait for it.
  const srv = await startInstance({ DATABASE_URL: url.toString(), DATABASE_SCHEMA: db.schema, DATABASE_QUERY_TIMEOUT_MS: '60000', LOG_LEVEL: 'warn' });
  try {
    const created = await srv.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: [{ sku: 'A', quantity: 1, unit_price_cents: 1 }] }) });
    const { id } = (await created.json()) as { id: number };
    // A version 1 read counts a deprecated field's read: a count waits for the next flush.
    expect((await srv.fetch(`/v1/orders/${id}`)).status).toBe(200);
    proxy.pause();
    expect(await srv.kill('SIGTERM')).toBe(0);
    expect(srv.stdout.join('')).toContain('field read counts lost at shutdown');
  } finally {
    await proxy.close();
    await db.drop();
  }
});

it('exits 0 on SIGTERM though a connection sent nothing and another only part of a head: neither is a request in flight', async () => {
  const srv = await startInstance({});
  const { port } = new URL(srv.url);
  const silent = connect(Number(port), '127.0.0.1');
  const partial = connect(Number(port), '127.0.0.1');
  try {
    await Promise.all([silent, partial].map((s) => new Promise<void>((resolve) => s.once('connect', () => resolve()))));
    partial.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    // The server has both (it answers a request on a third connection after them).
    expect((await fetch(`${srv.url}/healthz`)).status).toBe(200);
    expect(await srv.kill('SIGTERM')).toBe(0);
  } finally {
    silent.destroy();
    partial.destroy();
  }
});
