/**
 * `Expect: 100-continue` (RFC 9110 10.1.1) against the body limit: a body the limit
 * refuses is never asked for (a final answer at once, the connection closed); any other
 * gets its 100 Continue and is served once sent.
 */
import { connect, type Socket } from 'node:net';
import fc from 'fast-check';
import { DEFAULT_BODY_LIMIT } from '../../src/http';
import { startTestServer, type TestServer } from '../support/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

/** A connection whose received bytes can be awaited up to a marker, and whose close can be awaited. */
function open(): Promise<{ socket: Socket; until(marker: RegExp): Promise<string>; closed: Promise<string> }> {
  const { hostname, port } = new URL(s.url);
  return new Promise((resolve) => {
    const socket = connect({ port: Number(port), host: hostname }, () => resolve({ socket, until, closed }));
    let received = '';
    const waiters: (() => void)[] = [];
    socket.on('data', (d: Buffer) => {
      received += d.toString('latin1');
      for (const w of waiters.splice(0)) w();
    });
    socket.on('error', () => undefined);
    const closed = new Promise<string>((r) => socket.on('close', () => r(received)));
    function until(marker: RegExp): Promise<string> {
      return new Promise((r) => {
        const check = () => (marker.test(received) ? r(received) : waiters.push(check));
        check();
      });
    }
  });
}

const head = (path: string, length: number, auth: boolean) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\n${auth ? `Authorization: Bearer ${s.alice.token}\r\n` : ''}Content-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

describe('Expect: 100-continue', () => {
  it('a declared body over the limit gets its final answer at once, no 100, and the connection closes (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/orders', '/graphql'), fc.integer({ min: DEFAULT_BODY_LIMIT + 1, max: 1e9 }), fc.boolean(), async (path, length, auth) => {
        const c = await open();
        c.socket.write(head(path, length, auth));
        // No body is sent: the server must answer and close without waiting for it.
        const all = await c.closed;
        expect(all).toMatch(auth ? /^HTTP\/1\.1 413 / : /^HTTP\/1\.1 401 /);
        expect(all).not.toMatch(/100 Continue/);
        expect(all).toMatch(/\r\nconnection: close\r\n/i);
      }),
      { numRuns: 20 },
    );
  });

  it('empty list elements around 100-continue are ignored (RFC 9110 5.6.1): asked for with 100 Continue', async () => {
    for (const expectation of ['100-continue,', ', 100-continue', ' ,100-continue , ']) {
      const c = await open();
      c.socket.write(head('/orders', 2, true).replace('Expect: 100-continue', `Expect: ${expectation}`));
      expect(await c.until(/\r\n\r\n/)).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
      c.socket.destroy();
    }
  });

  it('a body within the limit is asked for with 100 Continue and served', async () => {
    const body = JSON.stringify({ items: [{ sku: 'TEA-1', quantity: 1, unit_price_cents: 450 }], currency: 'EUR' });
    const c = await open();
    c.socket.write(head('/orders', Buffer.byteLength(body), true));
    expect(await c.until(/\r\n\r\n/)).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
    c.socket.write(body);
    expect(await c.until(/HTTP\/1\.1 201 /)).toMatch(/HTTP\/1\.1 201 Created/);
    c.socket.destroy();
  });

  it('a body over the limit sent without waiting is refused 413 and the connection closes', async () => {
    const c = await open();
    c.socket.write(head('/orders', DEFAULT_BODY_LIMIT + 10, true).replace('Expect: 100-continue\r\n', '') + 'x'.repeat(1000));
    const all = await c.closed;
    expect(all).toMatch(/^HTTP\/1\.1 413 /);
    expect(all).toMatch(/\r\nconnection: close\r\n/i);
  });
});

describe('a body sent to an operation that takes none (a cancel)', () => {
  const cancel = (id: number, tail: string) => `POST /orders/${id}/cancel HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.alice.token}\r\nIf-Match: *\r\n${tail}`;
  const cases: [string, string, RegExp][] = [
    ['a chunk size that is no number', 'Transfer-Encoding: chunked\r\n\r\nzz\r\n', /^HTTP\/1\.1 400 /],
    ['a Content-Length over the limit, no body', `Content-Length: ${DEFAULT_BODY_LIMIT + 1}\r\n\r\n`, /^HTTP\/1\.1 413 /],
    ['a Content-Length over the limit with Expect: 100-continue', `Expect: 100-continue\r\nContent-Length: ${DEFAULT_BODY_LIMIT + 1}\r\n\r\n`, /^HTTP\/1\.1 413 /],
  ];
  it.each(cases)('%s: refused as a whole request before it runs; the order is not cancelled', async (_, tail, answer) => {
    const created = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: [{ sku: 'TEA-1', quantity: 1, unit_price_cents: 450 }] }) });
    const { id } = (await created.json()) as { id: number };
    const c = await open();
    c.socket.write(cancel(id, tail));
    const all = await c.closed;
    expect(all).toMatch(answer);
    expect(all).not.toMatch(/100 Continue|HTTP\/1\.1 200 /);
    expect(await (await s.fetch(`/orders/${id}`)).json()).toMatchObject({ status: 'pending' });
  });

  it('a body within the limit is read, dropped, and the cancel runs', async () => {
    const created = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: [{ sku: 'TEA-1', quantity: 1, unit_price_cents: 450 }] }) });
    const { id } = (await created.json()) as { id: number };
    const c = await open();
    c.socket.write(cancel(id, 'Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n'));
    expect(await c.until(/\r\n\r\n/)).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
    c.socket.write('{}');
    expect(await c.until(/HTTP\/1\.1 200 /)).toMatch(/HTTP\/1\.1 200 OK/);
    c.socket.destroy();
    expect(await (await s.fetch(`/orders/${id}`)).json()).toMatchObject({ status: 'cancelled' });
  });
});

describe('an answer sent before the request body was read', () => {
  /** Writes a chunked body in 64 KiB chunks until the server closes the connection, or `cap` bytes (then the server kept reading). */
  async function pushUntilClosed(c: Awaited<ReturnType<typeof open>>, cap: number): Promise<number> {
    const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 97), Buffer.from('\r\n')]);
    let sent = 0;
    let closed = false;
    void c.closed.then(() => (closed = true));
    while (!closed && !c.socket.destroyed && sent < cap) {
      sent += 0x10000;
      if (!c.socket.write(chunk)) await new Promise<void>((r) => (c.socket.once('drain', r), c.socket.once('close', r)));
    }
    return sent;
  }

  const early: [string, (t: string) => string, RegExp][] = [
    ['OPTIONS (204)', () => 'OPTIONS /orders HTTP/1.1\r\nHost: x\r\n', /^HTTP\/1\.1 204 /],
    ['a method the path lacks (405)', (t) => `DELETE /orders/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t}\r\n`, /^HTTP\/1\.1 405 /],
    ['no token (401)', () => 'POST /orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n', /^HTTP\/1\.1 401 /],
    ['a path nothing serves (Koa, 404)', () => 'POST /nowhere HTTP/1.1\r\nHost: x\r\n', /^HTTP\/1\.1 404 /],
    ['a PATCH without Content-Type (415)', (t) => `PATCH /orders/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t}\r\nIf-Match: *\r\n`, /^HTTP\/1\.1 415 /],
    ['GET /graphql (413 over the limit)', (t) => `GET /graphql?query=%7B__typename%7D HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t}\r\n`, /^HTTP\/1\.1 413 /],
    ['the SSE stream (400: a stream takes no body)', (t) => `GET /api/orders/1/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${t}\r\n`, /^HTTP\/1\.1 400 /],
  ];
  it.each(early)('%s: the connection closes with the answer, and the rest of an endless body is not read', async (_, request, answer) => {
    const c = await open();
    c.socket.write(`${request(s.alice.token)}Transfer-Encoding: chunked\r\n\r\n`);
    const sent = await pushUntilClosed(c, 256 * 1024 * 1024);
    const all = await c.closed;
    expect(all).toMatch(answer);
    expect(all).toMatch(/\r\nconnection: close\r\n/i);
    // What the kernel's buffers take before the close is seen; the body would go on without end.
    expect(sent).toBeLessThan(256 * 1024 * 1024);
  });

  it('a declared Content-Length over the limit on GET /graphql is 413 at once, as on REST; a stream request with any body is 400 at once', async () => {
    const c = await open();
    c.socket.write(`GET /graphql?query=%7B__typename%7D HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.alice.token}\r\nContent-Length: ${DEFAULT_BODY_LIMIT + 1}\r\n\r\n`);
    expect(await c.closed).toMatch(/^HTTP\/1\.1 413 /);
    // A small body sent whole, or one over the limit: answered (never left hanging) and the connection closes.
    for (const tail of ['Content-Length: 1\r\n\r\nx', `Content-Length: ${DEFAULT_BODY_LIMIT + 1}\r\n\r\n`]) {
      const stream = await open();
      stream.socket.write(`GET /api/orders/1/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${s.alice.token}\r\n${tail}`);
      const all = await stream.closed;
      expect(all).toMatch(/^HTTP\/1\.1 400 /);
      expect(all).toMatch(/A stream request takes no body/);
    }
  });

  it('100 Continue is sent only when the body is about to be read: never to a request refused first, or to one with no body', async () => {
    // Refused before its body (no token): the final answer alone, and the connection closes (the body was never asked for).
    const refused = await open();
    refused.socket.write(head('/orders', 2, false));
    const all = await refused.closed;
    expect(all).toMatch(/^HTTP\/1\.1 401 /);
    expect(all).not.toMatch(/100 Continue/);
    // Refused for its media type: a GraphQL POST that is not JSON gets its 415 alone, as a REST operation does.
    for (const path of ['/graphql', '/orders']) {
      const wrongType = await open();
      wrongType.socket.write(head(path, 2, true).replace('Content-Type: application/json', 'Content-Type: text/plain'));
      const answer = await wrongType.closed;
      expect({ path, status: answer.slice(0, 13) }).toEqual({ path, status: 'HTTP/1.1 415 ' });
      expect(answer).not.toMatch(/100 Continue/);
    }
    // No body to send: no 100.
    const bodiless = await open();
    bodiless.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n');
    expect(await bodiless.closed).toMatch(/^HTTP\/1\.1 200 /);
  });
});
