/**
 * A stream request whose client leaves while the service is still checking it (the token
 * read from the store, held here) opens no stream: nothing would ever end one whose
 * connection already closed. One whose client leaves while it waits for its turn to be
 * checked (new stream connections are checked a few per turn of the event loop) is let go
 * unchecked. Either is logged and timed as 499 (never sent).
 */
import { connect, type Socket } from 'node:net';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, holdTokenReads, openWs, WsClient } from '../support/streams';
import { StoreUnavailableError } from '../../src/store';

describe('a stream request whose client leaves during its check', () => {
  let srv: TestServer;
  beforeEach(async () => {
    srv = await startTestServer();
  });
  afterEach(() => srv.close());

  /**
   * A stream request whose client closes its side while its token is read from the store (a
   * token not yet in the auth cache: the read is held until the client has gone); the read
   * then goes on, or fails with `failWith`.
   */
  async function leaveDuringTokenRead(failWith?: Error): Promise<void> {
    const { id } = await createOrder(srv);
    const token = await srv.tokenFor('alice');
    const { entered: inStore, release } = holdTokenReads(srv.store);
    const { port } = new URL(srv.url);
    const s = connect(Number(port), '127.0.0.1');
    s.on('error', () => undefined);
    // The service ends its half in answer to ours: once that arrives it has seen the client go.
    const ended = new Promise<void>((r) => s.on('end', () => r()));
    s.resume();
    s.write(`GET /api/orders/${id}/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    await inStore;
    s.end();
    await ended;
    release(failWith);
    s.destroy();
  }

  it('SSE: a client that closes its side while its token is read gets no stream (logged 499)', async () => {
    await leaveDuringTokenRead();
    expect(await endedStreamRequests(srv, 1)).toEqual(['499 x1']);
    expect(srv.realtime.stats().sse).toBe(0);
  });

  it('SSE: a client that leaves while its check fails (the store unreachable) is logged 499, not the 503 nobody received', async () => {
    await leaveDuringTokenRead(new StoreUnavailableError('sqlite', { cause: new Error('held, then down') }));
    expect(await endedStreamRequests(srv, 1)).toEqual(['499 x1']);
  });

  it('SSE: a client that leaves while it waits for its turn is let go unchecked (takes no accept token, logged 499)', async () => {
    // The accept limiter's tokens count the requests that were checked: a frozen clock, so none comes back.
    await srv.close();
    const LIVE = 8;
    srv = await startTestServer({ ACCEPT_RATE: '1', ACCEPT_BURST: String(LIVE + 1) }, { now: () => 0 });
    const { id } = await createOrder(srv);
    const port = Number(new URL(srv.url).port);
    const request = `GET /api/orders/${id}/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${srv.alice.token}\r\n\r\n`;
    const health = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
    // Every connection answered once first, so that the service has accepted each and reads it.
    const clients: RawClient[] = [];
    for (let i = 0; i <= LIVE; i++) {
      const c = await RawClient.open(port);
      c.socket.write(health);
      expect(await c.status()).toBe(200);
      clients.push(c);
    }
    // All in one go: the service reads them in one turn of its event loop, checks 4 and queues
    // the rest; the last client closes its side behind its request, so it is gone when its turn comes.
    for (const c of clients.slice(0, LIVE)) c.socket.write(request);
    const gone = clients[LIVE];
    gone.socket.write(request);
    gone.socket.end();
    expect(await Promise.all(clients.slice(0, LIVE).map((c) => c.status()))).toEqual(Array(LIVE).fill(200));
    // The gone one took no token: one is left for the next stream.
    const next = await RawClient.open(port);
    next.socket.write(request);
    expect(await next.status()).toBe(200);
    const again = await RawClient.open(port);
    again.socket.write(request);
    expect(await again.status()).toBe(503);
    expect(await endedStreamRequests(srv, 3)).toEqual([`200 x${LIVE + 1}`, '499 x1', '503 x1']);
    for (const c of [...clients, next, again]) c.socket.destroy();
  });
});

/**
 * The stream requests timed so far, as "status xcount", once there are `kinds` statuses
 * (a request is timed when it is answered or given up, after its check: wait for that, then look).
 */
async function endedStreamRequests(srv: TestServer, kinds: number): Promise<string[]> {
  const streamRequests = /orderline_http_request_duration_seconds_count\{[^}]*route="\/api\/orders\/\{orderId\}\/stream"[^}]*status="(\d+)"[^}]*\} (\d+)/g;
  let statuses: string[] = [];
  for (const deadline = Date.now() + 10_000; statuses.length < kinds && Date.now() < deadline;) {
    statuses = [...(await srv.scrape()).matchAll(streamRequests)].map((m) => `${m[1]} x${m[2]}`).sort();
  }
  return statuses;
}

/** A raw HTTP/1.1 connection: send a request, read one response head. */
class RawClient {
  private buffer = '';
  private wake: (() => void) | undefined;
  private constructor(readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      this.wake?.();
    });
    socket.on('error', () => undefined);
  }

  static async open(port: number): Promise<RawClient> {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    return new RawClient(socket);
  }

  /** The status of the next response (its head), its body skipped by Content-Length. */
  async status(): Promise<number> {
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = this.buffer.slice(0, end);
        const length = /\r\ncontent-length: *(\d+)/i.exec(head);
        this.buffer = this.buffer.slice(end + 4 + (length ? Number(length[1]) : this.buffer.length));
        return Number(head.split(' ')[1]);
      }
      await new Promise<void>((r) => (this.wake = r));
    }
  }
}

describe('a WebSocket upgrade whose client leaves during its token check', () => {
  it('takes no stream place: with a cap of one, the next connection is admitted (on /orders and /graphql)', async () => {
    const srv = await startTestServer({ MAX_STREAMS_PER_ACCOUNT: '1' });
    try {
      for (const path of ['/orders', '/graphql']) {
        const token = await srv.tokenFor('alice'); // not yet in the auth cache: its check reads the store
        const { entered: inStore, release } = holdTokenReads(srv.store);
        const s = connect(Number(new URL(srv.url).port), '127.0.0.1');
        s.on('error', () => undefined);
        const closed = new Promise<void>((r) => s.on('close', () => r()));
        s.write(
          `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\nAuthorization: Bearer ${token}\r\n\r\n`,
        );
        await inStore;
        // A reset (a FIN the server would not notice: it does not read an upgrading socket, and lets a half close).
        s.resetAndDestroy();
        await closed;
        // The server's side is gone too once it sees the reset: wait for it, then let the check finish.
        for (let i = 0; i < 100 && (await srv.connections()) > 0; i++) await new Promise((r) => setTimeout(r, 10));
        release();
        srv.store.tokenBySelector = Object.getPrototypeOf(srv.store).tokenBySelector.bind(srv.store);
        const next = await openWs(srv, '', token);
        expect(next).toBeInstanceOf(WsClient);
        if (next instanceof WsClient) {
          next.ws.close();
          await next.closed();
        }
        for (let i = 0; i < 100 && (await srv.connections()) > 0; i++) await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      await srv.close();
    }
  });
});
