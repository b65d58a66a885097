/**
 * A stream request whose client leaves while the service is still checking it (the token
 * read from the store, held here) opens no stream: nothing would ever end one whose
 * connection already closed. The request is logged and timed as 499 (never sent).
 */
import { connect } from 'node:net';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, holdTokenReads } from '../support/streams';

describe('a stream request whose client leaves during its check', () => {
  let srv: TestServer;
  beforeEach(async () => {
    srv = await startTestServer();
  });
  afterEach(() => srv.close());

  it('SSE: a client that closes its side while its token is read gets no stream (logged 499)', async () => {
    const { id } = await createOrder(srv);
    // A token not yet in the auth cache: its check reads the store, held until the client has gone.
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
    release();
    // The request is timed once it is done, whatever it answered: wait for that, then look.
    const streamRequests = /orderline_http_request_duration_seconds_count\{[^}]*route="\/api\/orders\/\{orderId\}\/stream"[^}]*status="(\d+)"[^}]*\} (\d+)/g;
    let statuses: string[] = [];
    for (const deadline = Date.now() + 10_000; statuses.length === 0 && Date.now() < deadline;) {
      statuses = [...(await srv.scrape()).matchAll(streamRequests)].map((m) => `${m[1]} x${m[2]}`);
    }
    expect(statuses).toEqual(['499 x1']);
    expect(srv.realtime.stats().sse).toBe(0);
    s.destroy();
  });
});
