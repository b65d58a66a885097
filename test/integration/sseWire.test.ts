/**
 * The SSE stream's bytes on the wire, read off a raw TCP socket (nothing parses them
 * first): the stream writes its events to the socket itself, already framed as the
 * response's body (sse.ts), so the framing is checked here byte for byte. HTTP/1.1: a
 * chunked body whose every chunk's size line states its length exactly, across the head
 * write, replayed and live events, several events per write and the heartbeat. HTTP/1.0:
 * no chunking at all (`Transfer-Encoding` is HTTP/1.1's), the events as they are.
 */
import { connect } from 'node:net';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, touch } from '../support/streams';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ ACCEPT_RATE: '100000', ACCEPT_BURST: '100000', SSE_HEARTBEAT_S: '1' }); // a heartbeat soon, to see its framing
});
afterAll(() => srv.close());

/** Opens the stream over HTTP/`version` with a raw socket; `bytes()` is all received so far. */
async function rawStream(version: '1.0' | '1.1', orderId: number, lastEventId?: number) {
  const { hostname, port } = new URL(srv.url);
  const socket = connect(Number(port), hostname);
  let received = Buffer.alloc(0);
  socket.on('data', (d: Buffer) => (received = Buffer.concat([received, d])));
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(
    `GET /api/orders/${orderId}/stream HTTP/${version}\r\nHost: ${hostname}:${port}\r\nAccept: text/event-stream\r\n` +
      `Authorization: Bearer ${srv.alice.token}\r\n${lastEventId === undefined ? '' : `Last-Event-ID: ${lastEventId}\r\n`}\r\n`,
  );
  return { socket, bytes: () => received };
}

/** Splits a response into its head and body; the body dechunked when `chunked`, or null when a chunk is malformed. */
function parse(raw: Buffer, chunked: boolean): { head: string; body: string | null } | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = raw.subarray(0, end).toString('latin1');
  let rest = raw.subarray(end + 4);
  if (!chunked) return { head, body: rest.toString('utf8') };
  const parts: Buffer[] = [];
  while (rest.length > 0) {
    const line = rest.indexOf('\r\n');
    if (line < 0) break; // a size line still arriving
    const size = rest.subarray(0, line).toString('latin1');
    if (!/^[0-9a-f]+$/.test(size)) return { head, body: null };
    const n = parseInt(size, 16);
    if (rest.length < line + 2 + n + 2) break; // the chunk still arriving
    if (rest.subarray(line + 2 + n, line + 2 + n + 2).toString('latin1') !== '\r\n') return { head, body: null };
    parts.push(rest.subarray(line + 2, line + 2 + n));
    rest = rest.subarray(line + 2 + n + 2);
  }
  return { head, body: Buffer.concat(parts).toString('utf8') };
}

const ids = (body: string) => [...body.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));

async function until<T>(read: () => T | undefined, ok: (t: T) => boolean): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const v = read();
    if (v !== undefined && ok(v)) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`not reached: ${JSON.stringify(read())}`);
}

it('HTTP/1.1: a chunked body, every chunk exactly framed, through the head write, a replay, live events and the heartbeat', async () => {
  const { id } = await createOrder(srv);
  await touch(srv, id, 2); // seqs 2 and 3, replayed after Last-Event-ID 1
  const s = await rawStream('1.1', id, 1);
  try {
    const first = await until(
      () => parse(s.bytes(), true),
      (r) => r.body !== null && ids(r.body).includes(3),
    );
    expect(first.head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(first.head).toMatch(/\r\nTransfer-Encoding: chunked(\r\n|$)/i);
    await touch(srv, id, 3); // live: 4, 5, 6; a heartbeat comes within a second
    const all = await until(
      () => parse(s.bytes(), true),
      (r) => r.body !== null && ids(r.body).includes(6) && r.body.includes(': ping'),
    );
    expect(all.body).toMatch(/^retry: 2000\n\nid: 1\nevent: subscribed\n/);
    expect(ids(all.body!)).toEqual([1, 2, 3, 4, 5, 6]); // subscribed (1), then each event once, in order
    expect(all.body!.endsWith('\n\n')).toBe(true);
  } finally {
    s.socket.destroy();
  }
});

it('HTTP/1.0: no chunking, the events as they are, and the connection ends with the stream', async () => {
  const { id } = await createOrder(srv);
  const s = await rawStream('1.0', id, 0);
  try {
    await until(
      () => parse(s.bytes(), false),
      (r) => r.body !== null && ids(r.body).includes(1),
    );
    await touch(srv, id, 2);
    const all = await until(
      () => parse(s.bytes(), false),
      (r) => r.body !== null && ids(r.body).includes(3),
    );
    expect(all.head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(all.head).not.toMatch(/transfer-encoding/i);
    expect(all.body).toMatch(/^retry: 2000\n\nid: 0\nevent: subscribed\n/);
    expect(ids(all.body!)).toEqual([0, 1, 2, 3]);
    expect(all.body).not.toMatch(/\r\n/); // not a chunk size line anywhere
  } finally {
    s.socket.destroy();
  }
});

it('with writes batched (WRITE_DELAY_MS), several events in one write stay exact chunks; the end of the stream is the last chunk, and the connection ends behind it', async () => {
  const batched = await startTestServer({ ACCEPT_RATE: '100000', ACCEPT_BURST: '100000', WRITE_DELAY_MS: '20' });
  const { hostname, port } = new URL(batched.url);
  const socket = connect(Number(port), hostname);
  let received = Buffer.alloc(0);
  socket.on('data', (d: Buffer) => (received = Buffer.concat([received, d])));
  try {
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const { id } = await createOrder(batched);
    socket.write(`GET /api/orders/${id}/stream HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${batched.alice.token}\r\nLast-Event-ID: 0\r\n\r\n`);
    await until(
      () => parse(received, true),
      (r) => r.body !== null && ids(r.body).includes(1),
    );
    await touch(batched, id, 4); // 2..5, within the delay of each other
    await until(
      () => parse(received, true),
      (r) => r.body !== null && ids(r.body).includes(5),
    );
    batched.realtime.close(); // shutdown: `retry:` and the end of the response
    const terminated = () => {
      const end = received.indexOf('0\r\n\r\n', received.indexOf('\r\n\r\n') + 4);
      return end < 0 ? undefined : received.subarray(0, end + 5);
    };
    const whole = await until(terminated, () => true);
    const r = parse(whole.subarray(0, whole.length - 5), true)!;
    expect(r.body).not.toBeNull();
    expect(ids(r.body!)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(r.body!.endsWith('retry: 2000\n\n')).toBe(true);
    // The response ended cleanly, and the connection right behind it (a shutdown's end: the
    // client's reconnect opens a new connection, to an instance that serves).
    await new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));
    expect(received.length).toBe(whole.length);
  } finally {
    socket.destroy();
    await batched.close();
  }
});
