/**
 * Requests node:http cannot parse get a problem+json answer (with a request id), as every
 * other refusal does, and the connection closes; the service goes on serving.
 */
import { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import fc from 'fast-check';
import { WebSocket } from 'ws';
import { responses } from '../support/rawHttp';
import { startTestServer, type TestServer } from '../support/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

/** Writes `bytes` on a fresh connection to the server at `url` and reads everything until it closes the connection. */
function untilClosed(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ port: Number(port), host: hostname }, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => undefined); // a reset after the answer is fine: the answer is what is judged
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

/** Writes `bytes` on a fresh connection and reads until the server closes it. */
async function rawExchange(bytes: string): Promise<{ head: string; body: string }> {
  const all = await untilClosed(s.url, bytes);
  const end = all.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no answer: ${JSON.stringify(all)}`);
  return { head: all.slice(0, end), body: all.slice(end + 4) };
}

const host = () => `Host: ${new URL(s.url).host}`;

/** The head of the answer to a stream request sent as `bytes` on a fresh connection (the stream itself is not read: the connection is cut). */
function streamHead(bytes: string): Promise<string> {
  const { port } = new URL(s.url);
  return new Promise((resolve) => {
    const sock = connect(Number(port), '127.0.0.1', () => sock.write(bytes));
    let got = '';
    sock.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.includes('\r\n\r\n')) {
        sock.destroy();
        resolve(got.slice(0, got.indexOf('\r\n\r\n')));
      }
    });
  });
}

/** rawExchange's bytes, every response read. */
async function exchangeAll(bytes: string, heads: number[] = []) {
  const { head, body } = await rawExchange(bytes);
  return responses(`${head}\r\n\r\n${body}`, heads);
}

/** Requests node's parser refuses, generated: an unknown method (501) or a malformed one, broken framing, a head over node's limit. */
const unparsable = fc.oneof(
  fc
    .stringMatching(/^[A-Z]{3,10}$/)
    .filter(
      (m) =>
        ![
          'GET',
          'HEAD',
          'POST',
          'PUT',
          'PATCH',
          'DELETE',
          'OPTIONS',
          'TRACE',
          'CONNECT',
          'PURGE',
          'LOCK',
          'UNLOCK',
          'COPY',
          'MOVE',
          'MKCOL',
          'SEARCH',
          'BIND',
          'LINK',
          'UNBIND',
          'UNLINK',
          'REPORT',
          'MERGE',
          'NOTIFY',
          'SUBSCRIBE',
          'UNSUBSCRIBE',
          'ACL',
          'MKACTIVITY',
          'CHECKOUT',
          'PROPFIND',
          'PROPPATCH',
          'REBIND',
          'MKCALENDAR',
          'SOURCE',
          'QUERY',
          'PRI',
          'DESCRIBE',
          'ANNOUNCE',
          'SETUP',
          'PLAY',
          'PAUSE',
          'TEARDOWN',
          'RECORD',
          'REDIRECT',
          'FLUSH',
          'MSEARCH',
          'GET_PARAMETER',
          'SET_PARAMETER',
        ].includes(m),
    )
    // A well-formed method node does not know: 501 (RFC 9110 9.1); lower case too (methods are case-sensitive).
    .chain((m) => fc.constantFrom(m, m.toLowerCase()))
    .map((m) => ({ wire: `${m} /orders HTTP/1.1\r\n${host()}\r\n\r\n`, status: [501] })),
  // A method with a byte no token has: not a request line at all, 400.
  fc
    .tuple(fc.stringMatching(/^[A-Z]{1,4}$/), fc.constantFrom(...'()<>@,;:[]?={}"/'), fc.stringMatching(/^[A-Z]{0,4}$/))
    .map(([a, sep, b]) => ({ wire: `${a}${sep}${b} /orders HTTP/1.1\r\n${host()}\r\n\r\n`, status: [400] })),
  fc.tuple(fc.integer({ min: 1, max: 99 }), fc.integer({ min: 100, max: 999 })).map(([a, b]) => ({ wire: `POST /orders HTTP/1.1\r\n${host()}\r\nContent-Length: ${a}\r\nContent-Length: ${b}\r\n\r\n`, status: [400] })),
  fc.integer({ min: 1, max: 50 }).map((n) => ({ wire: `POST /orders HTTP/1.1\r\n${host()}\r\nContent-Length: ${n}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, status: [400] })),
  // Framing that breaks after the head was routed: the route's answer is pending, so the parse error answers.
  fc.stringMatching(/^[g-z]{1,6}$/).map((size) => ({ wire: `POST /orders HTTP/1.1\r\n${host()}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${size}\r\n{}\r\n0\r\n\r\n`, status: [400, 401] })),
  fc.integer({ min: 20, max: 40 }).map((kb) => ({ wire: `GET /healthz HTTP/1.1\r\n${host()}\r\nX-Filler: ${'a'.repeat(kb * 1024)}\r\n\r\n`, status: [431] })),
  // A tunnel request (node hands it to 'connect', not to the request listener).
  fc.constantFrom('/orders', 'example.com:443').map((target) => ({ wire: `CONNECT ${target} HTTP/1.1\r\n${host()}\r\n\r\n`, status: [400] })),
);

describe('a request node:http cannot parse', () => {
  it('is answered with problem+json and a request id, and the connection closes (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(unparsable, async ({ wire, status }) => {
        const { head, body } = await rawExchange(wire);
        const got = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]);
        expect(status).toContain(got);
        expect(head).toMatch(/\r\ncontent-type: application\/problem\+json/i);
        expect(head).toMatch(/\r\nx-request-id: \S+/i);
        const problem = JSON.parse(body) as { status: number; code: string };
        expect(problem.status).toBe(got);
        expect(typeof problem.code).toBe('string');
      }),
      { numRuns: 40 },
    );
    // And the service goes on serving.
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
  });

  it('answers the valid requests pipelined ahead of it first, in order: a create behind which it comes keeps its 201 (generated)', async () => {
    const token = await s.tokenFor('demo');
    await fc.assert(
      fc.asyncProperty(unparsable, fc.constantFrom('create', 'read'), async ({ wire, status }, ahead) => {
        const note = `pipelined-${Math.random().toString(36).slice(2)}`;
        const body = JSON.stringify({ note });
        const first =
          ahead === 'create'
            ? `POST /orders HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
            : `GET /orders?limit=1 HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${token}\r\n\r\n`;
        const answers = await exchangeAll(first + wire);
        // Exactly two answers, in order: the valid request's, then the refusal (never a second one to one request).
        expect(answers.map((a) => a.status)).toEqual([ahead === 'create' ? 201 : 200, expect.any(Number)]);
        expect(status).toContain(answers[1].status);
        expect(answers[1].head).toMatch(/\r\ncontent-type: application\/problem\+json/i);
        expect(JSON.parse(answers[1].body)).toMatchObject({ status: answers[1].status });
      }),
      { numRuns: 30 },
    );
  });

  it('behind a HEAD, the refusal keeps its body: the bytes that begin the chunk are the HEAD, not the broken request', async () => {
    const answers = await exchangeAll(`HEAD /healthz HTTP/1.1\r\n${host()}\r\n\r\nGET /\x7f HTTP/1.1\r\n${host()}\r\n\r\n`, [0]);
    expect(answers.map((a) => a.status)).toEqual([200, 400]);
    expect(JSON.parse(answers[1].body)).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
  });

  it('is handled once, however many bytes follow it, also behind an answer that never ends (an event stream)', async () => {
    // Each handling of the error waits for the stream's answer with a 'finish' listener on it: count them.
    const waits = jest.spyOn(ServerResponse.prototype, 'once');
    try {
      const created = await fetch(`${s.url}/orders`, { method: 'POST', headers: { authorization: `Bearer ${await s.tokenFor('demo')}`, 'content-type': 'application/json' }, body: '{}' });
      const { id } = (await created.json()) as { id: number };
      const token = await s.tokenFor('demo');
      const { hostname, port } = new URL(s.url);
      const socket = connect({ port: Number(port), host: hostname });
      socket.on('error', () => undefined);
      let got = '';
      socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
      socket.write(`GET /api/orders/${id}/stream HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\nGET /\x7f HTTP/1.1\r\n\r\n`);
      // Each byte on its own (each a chunk of its own for node's parser, which fails on each again).
      for (let i = 0; i < 40; i++) await new Promise((r) => socket.write('x', () => setTimeout(r, 2)));
      await new Promise<void>((r) => socket.write('y', () => r()));
      // The stream answered; the broken request waits behind it (its answer would follow the stream's end).
      for (let i = 0; i < 100 && !got.includes('event: subscribed'); i++) await new Promise((r) => setTimeout(r, 20));
      expect(got).toMatch(/^HTTP\/1\.1 200 /);
      socket.destroy();
      expect(waits.mock.calls.filter(([event]) => event === 'finish').length).toBeLessThanOrEqual(1);
    } finally {
      waits.mockRestore();
    }
  });

  it('a request node cannot parse is counted and logged as every answer is: the metric by method UNPARSED', async () => {
    const count = async () => Number(/orderline_http_request_duration_seconds_count\{method="UNPARSED",route="unmatched",status="400"\} (\d+)/.exec(await s.metrics.registry.metrics())?.[1] ?? 0);
    const before = await count();
    const { head } = await rawExchange('BR@W / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/);
    expect(await count()).toBe(before + 1);
  });

  it('an unknown method (501) is counted by method OTHER, as any method a client invents, not as a request node could not read', async () => {
    const count = async (method: string) =>
      Number(new RegExp(`orderline_http_request_duration_seconds_count\\{method="${method}",route="unmatched",status="501"\\} (\\d+)`).exec(await s.metrics.registry.metrics())?.[1] ?? 0);
    const [other, unparsed] = [await count('OTHER'), await count('UNPARSED')];
    const { head } = await rawExchange(`FROB /orders/1 HTTP/1.1\r\n${host()}\r\n\r\n`);
    expect(head).toMatch(/^HTTP\/1\.1 501 /);
    expect([await count('OTHER'), await count('UNPARSED')]).toEqual([other + 1, unparsed]);
  });

  it('a routed request whose body breaks is counted once, by its own exchange; a refused WebSocket handshake is counted too', async () => {
    const text = async () => s.metrics.registry.metrics();
    const count = (metrics: string, method: string, route: string, status: number) =>
      Number(new RegExp(`orderline_http_request_duration_seconds_count\\{method="${method}",route="${route.replace(/[/{}]/g, (c) => '\\' + c)}",status="${status}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
    const before = await text();
    const t = await s.tokenFor('demo');
    const { head } = await rawExchange(`POST /orders HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`);
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    let after = await text();
    for (let i = 0; i < 100 && count(after, 'POST', '/orders', 400) === count(before, 'POST', '/orders', 400); i++) {
      await new Promise((r) => setTimeout(r, 20)); // the route's own (unheard) answer follows the raw one
      after = await text();
    }
    expect(count(after, 'POST', '/orders', 400)).toBe(count(before, 'POST', '/orders', 400) + 1);
    expect(count(after, 'POST', 'unmatched', 400)).toBe(count(before, 'POST', 'unmatched', 400));
    const refused = await rawExchange(`GET /orders HTTP/1.1\r\n${host()}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
    expect(refused.head).toMatch(/^HTTP\/1\.1 401 /);
    // Under its endpoint's route, as an accepted handshake is; one on no endpoint is unmatched.
    expect(count(await text(), 'GET', 'ws:/orders', 401)).toBe(count(before, 'GET', 'ws:/orders', 401) + 1);
    const nowhere = await rawExchange(`GET /nowhere HTTP/1.1\r\n${host()}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
    expect(nowhere.head).toMatch(/^HTTP\/1\.1 404 /);
    expect(count(await text(), 'GET', 'unmatched', 404)).toBe(count(before, 'GET', 'unmatched', 404) + 1);
  });

  it('an accepted WebSocket handshake answers 101 with its request id, and is counted apart (route ws:/orders, ws:/graphql)', async () => {
    const count = async (route: string) =>
      Number(new RegExp(`orderline_http_request_duration_seconds_count\\{method="GET",route="${route.replace('/', '\\/')}",status="101"\\} (\\d+)`).exec(await s.metrics.registry.metrics())?.[1] ?? 0);
    const t = await s.tokenFor('demo');
    for (const [path, protocol] of [
      ['/orders', undefined],
      ['/graphql', 'graphql-transport-ws'],
    ] as const) {
      const before = await count(`ws:${path}`);
      for (const sent of ['ws-trace-1', undefined]) {
        const ws = new WebSocket(`${s.url.replace('http', 'ws')}${path}?access_token=${t}`, protocol, { headers: sent ? { 'x-request-id': sent } : {} });
        const id = await new Promise<string | undefined>((resolve, reject) => {
          ws.once('upgrade', (res) => resolve(res.headers['x-request-id'] as string | undefined));
          ws.once('error', reject);
        });
        ws.close();
        if (sent) expect(id).toBe(sent);
        else expect(id).toMatch(/^[0-9a-f-]{36}$/);
      }
      expect(await count(`ws:${path}`)).toBe(before + 2);
    }
  });

  it('answers CONNECT (a tunnel request, for proxies) with a 400 problem, whatever its target', async () => {
    for (const target of ['/graphql', '/orders', 'example.com:443']) {
      const { head, body } = await rawExchange(`CONNECT ${target} HTTP/1.1\r\n${host()}\r\n\r\n`);
      expect(head).toMatch(/^HTTP\/1\.1 400 /);
      expect(head).toMatch(/\r\nx-request-id: \S+/i);
      expect(JSON.parse(body)).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    }
  });

  it('answers a HEAD with the head alone, the length its body would have (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/orders/\xe9', '/orders/a b/c', '/\x7f'), fc.constantFrom('GET', 'HEAD'), async (target, method) => {
        const { head, body } = await rawExchange(`${method} ${target} HTTP/1.1\r\n${host()}\r\n\r\n`);
        expect(head).toMatch(/^HTTP\/1\.1 400 /);
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
        expect(length).toBeGreaterThan(0);
        expect(body.length).toBe(method === 'HEAD' ? 0 : length);
      }),
      { numRuns: 12 },
    );
  });
});

describe('requests node:http reads but the service will not serve', () => {
  const token = () => s.tokenFor('demo');
  const orders = async (t: string) => ((await (await fetch(`${s.url}/orders?limit=100`, { headers: { authorization: `Bearer ${t}` } })).json()) as { orders: unknown[] }).orders.length;

  it('an HTTP/1.1 request without Host: 400 problem+json with a request id, connection closed', async () => {
    const t = await token();
    for (const target of ['/orders', '/graphql?query=%7B__typename%7D', '/healthz', '/nowhere']) {
      const { head, body } = await rawExchange(`GET ${target} HTTP/1.1\r\nAuthorization: Bearer ${t}\r\n\r\n`);
      expect(head).toMatch(/^HTTP\/1\.1 400 /);
      expect(head).toMatch(/\r\nX-Request-Id: \S+/i);
      expect(head).toMatch(/\r\nConnection: close/i);
      expect(JSON.parse(body)).toMatchObject({ status: 400, code: 'BAD_REQUEST', detail: expect.stringContaining('Host') });
    }
    // HTTP/1.0 needs none.
    expect((await rawExchange('GET /healthz HTTP/1.0\r\n\r\n')).head).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('a second Host, Authorization or Content-Type field: 400 problem+json, connection closed, nothing stored, WebSocket handshakes too (generated)', async () => {
    const t = await token();
    const other = await s.tokenFor('demo');
    const before = await orders(t);
    const body = '{"items":[{"sku":"DUP","quantity":1,"unit_price_cents":1}]}';
    const cases = fc.record({
      field: fc.constantFrom('host', 'authorization', 'content-type'),
      names: fc.tuple(fc.constantFrom('Host', 'host', 'HOST'), fc.constantFrom('Authorization', 'authorization', 'AUTHORIZATION')),
      same: fc.boolean(),
      request: fc.constantFrom('create', 'read', 'upgrade'),
    });
    await fc.assert(
      fc.asyncProperty(cases, async ({ field, names: [h, a], same, request }) => {
        const hosts = field === 'host' ? [host(), same ? host() : 'Host: elsewhere.example'] : [host()];
        const auths = field === 'authorization' ? [`Bearer ${t}`, same ? `Bearer ${t}` : `Bearer ${other}`] : [`Bearer ${t}`];
        const types = field === 'content-type' ? ['application/json', same ? 'application/json' : 'text/plain'] : request === 'create' ? ['application/json'] : [];
        const fields = [...hosts.map((x) => `${h}: ${x.slice(6)}`), ...auths.map((x) => `${a}: ${x}`), ...types.map((x) => `Content-Type: ${x}`)].join('\r\n');
        const bytes =
          request === 'create'
            ? `POST /orders HTTP/1.1\r\n${fields}\r\nContent-Length: ${body.length}\r\n\r\n${body}`
            : request === 'read'
              ? `GET /orders HTTP/1.1\r\n${fields}\r\n\r\n`
              : `GET /orders HTTP/1.1\r\n${fields}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`;
        const { head, body: answer } = await rawExchange(bytes);
        expect(head).toMatch(/^HTTP\/1\.1 400 /);
        expect(head).toMatch(/\r\nConnection: close/i);
        expect(head.match(/\r\nConnection:/gi)).toHaveLength(1);
        expect(JSON.parse(answer)).toMatchObject({ status: 400, code: 'BAD_REQUEST', detail: expect.stringContaining(field === 'host' ? 'Host' : field === 'authorization' ? 'Authorization' : 'Content-Type') });
      }),
      { numRuns: 30 },
    );
    expect(await orders(t)).toBe(before);
  });

  it('an expectation other than 100-continue: 417 problem+json, nothing stored (generated)', async () => {
    const t = await token();
    const before = await orders(t);
    // Also 100-continue beside another expectation: node would continue it (its own test finds the word), the server must not.
    const expectation = fc.oneof(
      fc.stringMatching(/^[a-z0-9-]{1,20}(=[a-z0-9]{1,8})?$/).filter((e) => !/(?:^|\W)100-continue(?:$|\W)/i.test(e)),
      fc.constantFrom('100-continue, foo', 'foo, 100-continue', '100-continue; x=1', ', 100-continue, x'),
    );
    await fc.assert(
      fc.asyncProperty(expectation, async (e) => {
        const body = '{}';
        const { head, body: answer } = await rawExchange(
          `POST /orders HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nExpect: ${e}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        );
        expect(head).toMatch(/^HTTP\/1\.1 417 /);
        expect(JSON.parse(answer)).toMatchObject({ status: 417, code: 'EXPECTATION_FAILED' });
      }),
      { numRuns: 25 },
    );
    expect(await orders(t)).toBe(before);
  });

  it('a Host that is no host[:port]: 400 problem+json, nothing stored; an empty Host and every form of a host are served (generated)', async () => {
    const t = await token();
    const before = await orders(t);
    const bad = fc
      .tuple(fc.stringMatching(/^[a-z0-9.]{0,8}$/), fc.constantFrom(' ', '/', '@', '"', '<', '>', '\\', '^', '{', '|', '`', '#', '?'), fc.stringMatching(/^[a-z0-9.]{0,8}$/))
      .map(([a, c, b]) => `${a}x${c}y${b}`);
    await fc.assert(
      fc.asyncProperty(bad, async (value) => {
        const body = '{"items":[{"sku":"HOST","quantity":1,"unit_price_cents":1}]}';
        const { head, body: answer } = await rawExchange(`POST /orders HTTP/1.1\r\nHost: ${value}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
        expect(head).toMatch(/^HTTP\/1\.1 400 /);
        expect(JSON.parse(answer)).toMatchObject({ status: 400, code: 'BAD_REQUEST', detail: expect.stringContaining('Host') });
      }),
      { numRuns: 25 },
    );
    expect(await orders(t)).toBe(before);
    for (const value of ['', 'example.com', 'example.com:8080', '127.0.0.1:3000', '[::1]:3000', 'xn--bcher-kva.example']) {
      const { head } = await rawExchange(`GET /healthz HTTP/1.1\r\nHost: ${value}\r\nConnection: close\r\n\r\n`);
      expect(head).toMatch(/^HTTP\/1\.1 200 /);
    }
  });

  it('a transfer coding other than chunked: 501 problem+json, nothing stored (generated)', async () => {
    const t = await token();
    const before = await orders(t);
    const codings = fc.array(fc.constantFrom('gzip', 'deflate', 'compress', 'identity', 'x-custom', 'br;q=1'), { minLength: 1, maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(codings, async (list) => {
        const body = '{"items":[{"sku":"TE","quantity":1,"unit_price_cents":1}]}';
        const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
        const { head, body: answer } = await rawExchange(
          `POST /orders HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nTransfer-Encoding: ${list.join(', ')}, chunked\r\n\r\n${chunked}`,
        );
        expect(head).toMatch(/^HTTP\/1\.1 501 /);
        expect(JSON.parse(answer)).toMatchObject({ status: 501, code: 'NOT_IMPLEMENTED' });
      }),
      { numRuns: 25 },
    );
    expect(await orders(t)).toBe(before);
    // One answer to the refused request, and a create pipelined behind it is neither run nor answered.
    const create = (n: string) => `POST /orders HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nContent-Length: ${n.length}\r\n\r\n${n}`;
    for (const refused of [
      `POST /orders HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      `POST /orders HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\nzz\r\n`,
      `GET /orders HTTP/1.1\r\nAuthorization: Bearer ${t}\r\n\r\n`,
      `GET /orders HTTP/1.1\r\n${host()}\r\nExpect: later\r\nAuthorization: Bearer ${t}\r\n\r\n`,
    ]) {
      const answers = await exchangeAll(refused + create('{}'));
      expect(answers).toHaveLength(1);
      expect([400, 417, 501]).toContain(answers[0].status);
    }
    expect(await orders(t)).toBe(before);
    // chunked alone is read as ever, after empty list elements too (RFC 9110 5.6.1: they are ignored).
    const body = '{}';
    for (const coding of ['chunked', ', chunked', ' ,, chunked']) {
      const ok = await rawExchange(
        `POST /orders HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nTransfer-Encoding: ${coding}\r\nConnection: close\r\n\r\n2\r\n${body}\r\n0\r\n\r\n`,
      );
      expect([coding, ok.head.split('\r\n')[0]]).toEqual([coding, 'HTTP/1.1 201 Created']);
    }
  });
});

describe('a request pipelined behind a body over the limit, read in the same chunk', () => {
  it('is neither run nor answered, behind REST and /graphql alike: the 413 alone comes back, and nothing is stored', async () => {
    const limited = await startTestServer({ BODY_LIMIT_BYTES: '1024' });
    try {
      const t = limited.alice.token;
      const count = async () => ((await (await limited.fetch('/orders?limit=100')).json()) as { orders: unknown[] }).orders.length;
      const before = await count();
      const big = 'x'.repeat(2048);
      // Ahead: chunked, its one chunk over the limit; the next request right behind it in the same write.
      const over = (path: string) =>
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`;
      const post = (path: string, body: string) => `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      const create = post('/orders', '{}');
      const query = post('/graphql', '{"query":"{ viewer { id } }"}');
      for (const bytes of [over('/orders') + create, over('/orders') + query, over('/graphql') + create]) {
        const answers = await untilClosed(limited.url, bytes);
        expect(answers.match(/^HTTP\/1\.1 \d{3}/gm)).toEqual(['HTTP/1.1 413']);
      }
      expect(await count()).toBe(before);
    } finally {
      await limited.close();
    }
  });
});

describe('a request not sent in time (REQUEST_TIMEOUT_S)', () => {
  it('a body that stalls, and a head that stalls, are answered 408 problem+json and the connection closes; nothing is stored', async () => {
    const slow = await startTestServer({ REQUEST_TIMEOUT_S: '1' });
    try {
      const count = async () => ((await (await slow.fetch('/orders?limit=100')).json()) as { orders: unknown[] }).orders.length;
      const before = await count();
      for (const partial of [
        `POST /orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${slow.alice.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"items":`,
        `GET /orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bea`,
      ]) {
        const answer = await untilClosed(slow.url, partial);
        expect(answer).toMatch(/^HTTP\/1\.1 408 /);
        expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 408, code: 'REQUEST_TIMEOUT' });
      }
      expect(await count()).toBe(before);
      // The stalled create was routed: its exchange counts (and logs) the 408 that was sent, not the 400 its route would have answered.
      const counted = async (status: number) =>
        Number(new RegExp(`orderline_http_request_duration_seconds_count\\{method="POST",route="\\/orders",status="${status}"\\} (\\d+)`).exec(await slow.metrics.registry.metrics())?.[1] ?? 0);
      for (let i = 0; i < 100 && (await counted(408)) === 0; i++) await new Promise((r) => setTimeout(r, 20)); // the route ends after the raw answer
      expect([await counted(408), await counted(400)]).toEqual([1, 0]);
    } finally {
      await slow.close();
    }
  });
});

describe('framing edge cases', () => {
  it('refuses a request line of another HTTP version (2.0, 0.9 with headers) with 505 and closes: nothing stored, nothing behind it run, upgrades too (generated)', async () => {
    const t = s.alice.token;
    const count = async () => ((await (await s.fetch('/orders?limit=100')).json()) as { orders: unknown[] }).orders.length;
    const before = await count();
    const body = '{"items":[{"sku":"V2","quantity":1,"unit_price_cents":1}]}';
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('2.0', '0.9'), fc.constantFrom('create', 'read', 'upgrade'), async (version, request) => {
        const head =
          request === 'create'
            ? `POST /orders HTTP/${version}\r\n${host()}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
            : request === 'read'
              ? `GET /orders?limit=1 HTTP/${version}\r\n${host()}\r\nAuthorization: Bearer ${t}\r\n\r\n`
              : `GET /orders HTTP/${version}\r\n${host()}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer ${t}\r\n\r\n`;
        const all = await exchangeAll(`${head}GET /healthz HTTP/1.1\r\n${host()}\r\n\r\n`);
        expect(all.map((r) => r.status)).toEqual([505]);
        expect(all[0].head).toMatch(/\r\nConnection: close/i);
        expect(JSON.parse(all[0].body)).toMatchObject({ status: 505, code: 'HTTP_VERSION_NOT_SUPPORTED', detail: expect.stringContaining(`HTTP/${version}`) });
      }),
      { numRuns: 6 },
    );
    // Versions node's parser cannot read a request of at all: 505 too.
    for (const version of ['3.0', '1.2', '10.1']) {
      const { head, body } = await rawExchange(`GET /healthz HTTP/${version}\r\n${host()}\r\n\r\n`);
      expect(head).toMatch(/^HTTP\/1\.1 505 /);
      // The same problem as a version node parses (above): one rule, one detail.
      expect(JSON.parse(body)).toMatchObject({ status: 505, code: 'HTTP_VERSION_NOT_SUPPORTED', detail: `This server speaks HTTP/1.1 and HTTP/1.0, not HTTP/${version}` });
    }
    // An HTTP/2 client with prior knowledge (curl --http2-prior-knowledge) opens with the connection preface.
    const preface = await rawExchange('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
    expect(preface.head).toMatch(/^HTTP\/1\.1 505 /);
    expect(JSON.parse(preface.body)).toMatchObject({ status: 505, detail: 'This server speaks HTTP/1.1 and HTTP/1.0, not HTTP/2.0' });
    expect(await count()).toBe(before);
  });

  it('a request line broken after its version (a bare LF, a space or tab before the CRLF) is 400, not 505, whatever the version (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('1.0', '1.1', '3.0'), fc.constantFrom('\n', ' \r\n', '\t\r\n', '  \n'), fc.boolean(), async (version, end, behind) => {
        const ahead = behind ? `GET /healthz HTTP/1.1\r\n${host()}\r\n\r\n` : '';
        const all = await exchangeAll(`${ahead}GET /healthz HTTP/${version}${end}${host()}\r\n\r\n`);
        expect(all.map((r) => r.status)).toEqual(behind ? [200, 400] : [400]);
        expect(JSON.parse(all[all.length - 1].body)).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
      }),
      { numRuns: 20 },
    );
  });

  it('a request-target over 16 KiB is 414, header fields over 16 KiB are 431, each judged on its own, a head over 40 KiB 431; within all, served; nothing stored (generated)', async () => {
    const t = s.alice.token;
    const count = async () => ((await (await s.fetch('/orders?limit=100')).json()) as { orders: unknown[] }).orders.length;
    const before = await count();
    const body = '{"items":[{"sku":"LONG","quantity":1,"unit_price_cents":1}]}';
    let created = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 30 * 1024 }), fc.integer({ min: 0, max: 20 * 1024 }), fc.constantFrom('GET', 'POST'), async (query, filler, method) => {
        const target = `/orders?x=${'a'.repeat(query)}`;
        const fields = [host(), `Authorization: Bearer ${t}`, 'Connection: close', ...(filler > 0 ? [`X-Filler: ${'b'.repeat(filler)}`] : [])];
        if (method === 'POST') fields.push('Content-Type: application/json', `Content-Length: ${body.length}`);
        const fieldBytes = fields.reduce((n, f) => n + f.length + 2, 0);
        const answer = await rawExchange(`${method} ${target} HTTP/1.1\r\n${fields.join('\r\n')}\r\n\r\n${method === 'POST' ? body : ''}`);
        const status = Number(answer.head.slice(9, 12));
        // A head whose target, field names and values reach 40 KiB is node's parser's to refuse, 431 whatever its parts.
        const nodeCounted = target.length + fields.reduce((n, f) => n + f.length - 2, 0);
        const expected = nodeCounted >= 40 * 1024 ? 431 : target.length > 16 * 1024 ? 414 : fieldBytes > 16 * 1024 ? 431 : method === 'POST' ? 201 : 200;
        expect(status).toBe(expected);
        if (expected === 201) created++;
        if (expected >= 400) expect(JSON.parse(answer.body)).toMatchObject({ status: expected, code: expected === 414 ? 'URI_TOO_LONG' : 'HEADER_FIELDS_TOO_LARGE' });
      }),
      { numRuns: 30 },
    );
    expect(await count()).toBe(before + created);
  });

  it('a request with a thousand header fields or more is 431: node keeps about a thousand, and a field past them would go unseen (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 990, max: 1100 }), fc.boolean(), async (filler, authorizationLast) => {
        const fields = [host(), 'Connection: close', ...Array.from({ length: filler }, (_, i) => `a${i}: 1`), ...(authorizationLast ? [`Authorization: Bearer ${s.alice.token}`] : [])];
        const answer = await rawExchange(`GET /healthz HTTP/1.1\r\n${fields.join('\r\n')}\r\n\r\n`);
        expect(Number(answer.head.slice(9, 12))).toBe(fields.length >= 1000 ? 431 : 200);
      }),
      { numRuns: 20 },
    );
  });

  it('refuses an HTTP/1.0 request with Transfer-Encoding (faulty framing) with 400 and closes: nothing stored, nothing behind it run', async () => {
    const t = s.alice.token;
    const count = async () => ((await (await s.fetch('/orders?limit=100')).json()) as { orders: unknown[] }).orders.length;
    const before = await count();
    const post = (version: string) => `POST /orders HTTP/${version}\r\n${host()}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`;
    const all = await exchangeAll(`${post('1.0')}GET /healthz HTTP/1.1\r\n${host()}\r\n\r\n`);
    expect(all.map((r) => r.status)).toEqual([400]);
    expect(JSON.parse(all[0].body)).toMatchObject({ status: 400, detail: expect.stringContaining('HTTP/1.0') });
    expect(await count()).toBe(before);
    // The same request in HTTP/1.1 is framed by its chunks and creates.
    expect((await rawExchange(post('1.1').replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'))).head).toMatch(/^HTTP\/1\.1 201 /);
  });

  it("honours a stream request's Connection: close: the head says close, and a HEAD's connection ends with it", async () => {
    const t = s.alice.token;
    const created = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const { id } = (await created.json()) as { id: number };
    const stream = `/api/orders/${id}/stream`;
    const all = await exchangeAll(`HEAD ${stream} HTTP/1.1\r\n${host()}\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${t}\r\nConnection: close\r\n\r\nGET /healthz HTTP/1.1\r\n${host()}\r\n\r\n`, [0]);
    expect(all.map((r) => r.status)).toEqual([200]);
    expect(all[0].head).toMatch(/\r\nConnection: close/i);
    const head = await streamHead(`GET ${stream} HTTP/1.1\r\n${host()}\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${t}\r\nConnection: keep-alive, close\r\n\r\n`);
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head).toMatch(/\r\nConnection: close/i);
    expect(head).not.toMatch(/keep-alive/i);
  });

  it('chunked not the last transfer coding is 400 (the length cannot be read); raw-socket refusals carry Date; an HTTP/1.0 stream says Connection: close', async () => {
    const t = s.alice.token;
    for (const coding of ['xchunked', 'chunked, gzip', 'gzip']) {
      const { head } = await rawExchange(`POST /orders HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nTransfer-Encoding: ${coding}\r\n\r\n2\r\n{}\r\n0\r\n\r\n`);
      expect(head).toMatch(/^HTTP\/1\.1 400 /);
    }
    // A refusal written on the raw socket (two Content-Lengths: node's parser refuses it) has a Date like every answer.
    const broken = await rawExchange(`POST /orders HTTP/1.1\r\n${host()}\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`);
    expect(broken.head).toMatch(/^HTTP\/1\.1 400 /);
    expect(broken.head).toMatch(/\r\nDate: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT/);
    // An HTTP/1.0 event stream ends with its connection: it does not promise keep-alive.
    const created = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const { id } = (await created.json()) as { id: number };
    const head = await streamHead(`GET /api/orders/${id}/stream HTTP/1.0\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${t}\r\n\r\n`);
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head).toMatch(/\r\nConnection: close/i);
    expect(head).not.toMatch(/keep-alive/i);
  });
});
