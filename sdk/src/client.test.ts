/**
 * The REST client's behaviour against a fake fetch (no server, no timing): the
 * merge-patch media type, one error type, safe retries honouring Retry-After, abort
 * and timeouts, token functions, keys on an insecure origin, pages.
 */
import fc from 'fast-check';
import { createOrderlineClient, createRestClient, unwrap } from './client';
import { createGraphqlClient } from './graphql';
import { streamOrder } from './realtime';
import { OrderlineError } from './errors';
import { listOrders, allOrders, updateOrder } from './orders';

type Handler = (req: Request, n: number) => Response | Promise<Response>;

/** A fake server: records each request (method, path, selected headers) and answers with `handler`. */
function fake(handler: Handler) {
  const seen: { method: string; path: string; headers: Headers }[] = [];
  const fetch = async (input: Request) => {
    const req = new Request(input);
    seen.push({ method: req.method, path: new URL(req.url).pathname + new URL(req.url).search, headers: req.headers });
    return handler(req, seen.length);
  };
  return { fetch, seen };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers } });
const problem = (status: number, code: string, headers: Record<string, string> = {}) => json(status, { type: 'about:blank', title: code, status, code }, { 'x-request-id': 'req-1', ...headers });
const order = { id: 1, status: 'pending', items: [], total_cents: 0, currency: 'EUR', discount: null, note: null, created_at: '', updated_at: '', _links: { self: { href: '/v2/orders/1' } } };
const noWait = { sleep: () => Promise.resolve() };

describe('client options', () => {
  it('joins paths to a baseUrl without its trailing slashes, a path prefix kept', async () => {
    const { fetch, seen } = fake(() => json(200, order, { etag: '"1-1-v2j"' }));
    const { api } = createOrderlineClient({ baseUrl: 'http://x.test/api//', fetch });
    await unwrap(api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } }));
    expect(seen[0].path).toBe('/api/v2/orders/1');
  });

  it('a baseUrl that is no http(s) URL throws a TypeError when a client is made, not at its first call (generated)', () => {
    const fetch = () => Promise.reject(new Error('no call expected'));
    const make = [
      (baseUrl: string) => createOrderlineClient({ baseUrl, fetch }),
      (baseUrl: string) => createRestClient({ baseUrl, fetch }),
      (baseUrl: string) => createGraphqlClient({ baseUrl, fetch }),
      (baseUrl: string) => streamOrder({ baseUrl, orderId: 1, transport: 'sse', onEvent: () => undefined, fetch, signal: AbortSignal.abort() }),
    ];
    // No scheme (`localhost:3000` reads as scheme "localhost"), another scheme, or no URL at all; Node has no page to resolve a path against.
    const bad = fc.oneof(
      fc.domain().map((d) => `${d}:3000`),
      fc.webUrl().map((u) => u.replace(/^https?/, 'ftp')),
      fc.string().filter((s) => !/^\s*https?:/i.test(s)),
    );
    fc.assert(
      fc.property(bad, (baseUrl) => {
        for (const m of make) {
          // By name: node's own "Invalid URL" TypeError is of another realm than jest's.
          const err = ((): unknown => {
            try {
              m(baseUrl);
            } catch (e) {
              return e;
            }
            return undefined;
          })();
          expect(err).toHaveProperty('name', 'TypeError');
        }
      }),
    );
    fc.assert(
      fc.property(fc.webUrl({ validSchemes: ['http', 'https'] }), (baseUrl) => {
        for (const m of make) expect(() => m(baseUrl)).not.toThrow();
      }),
    );
  });
});

describe('REST client', () => {
  it('sends a PATCH as application/merge-patch+json without being told', async () => {
    const { fetch, seen } = fake(() => json(200, order, { etag: '"1-2-v2"' }));
    const api = createRestClient({ baseUrl: 'http://x.test', fetch });
    await api.PATCH('/v2/orders/{orderId}', { params: { path: { orderId: 1 }, header: { 'If-Match': '"1-1-v2"' } }, body: { note: 'n' } });
    expect(seen[0].headers.get('content-type')).toBe('application/merge-patch+json');
  });

  it('throws one OrderlineError for an error answer: status, the code as sent, requestId, the problem body', async () => {
    const { fetch } = fake(() => problem(404, 'NOT_FOUND'));
    const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch });
    const err = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 9 } } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OrderlineError);
    expect(err).toMatchObject({ status: 404, code: 'NOT_FOUND', requestId: 'req-1', source: 'rest', problem: { code: 'NOT_FOUND', status: 404 } });
  });

  it("a success that is not JSON (a proxy's or portal's HTML page) is OrderlineError BAD_RESPONSE, not a SyntaxError; text asked for is text", async () => {
    const page = () => new Response('<html>Sign in to the Wi-Fi</html>', { status: 200, headers: { 'content-type': 'text/html', 'x-request-id': 'req-2' } });
    const { fetch } = fake(page);
    const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch, retry: false });
    const err = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OrderlineError);
    expect(err).toMatchObject({ status: 200, code: 'BAD_RESPONSE', source: 'rest', requestId: 'req-2' });
    // The reference pages are HTML by contract: read as text they are answered as such.
    const docs = await api.GET('/docs', { parseAs: 'text' });
    expect(docs.data).toBe('<html>Sign in to the Wi-Fi</html>');
    // No content at all (204, or a cleared body) is not a bad JSON answer.
    const { fetch: empty } = fake(() => new Response(null, { status: 204 }));
    const none = createOrderlineClient({ baseUrl: 'http://x.test', fetch: empty, retry: false }).api;
    await expect(none.POST('/v2/orders/{orderId}/cancel', { params: { path: { orderId: 1 }, header: { 'If-Match': '*' } } })).resolves.toMatchObject({ data: undefined });
  });

  it('unwrap turns a raw call of createRestClient into data or the same OrderlineError', async () => {
    const { fetch } = fake((_req, n) => (n === 1 ? json(200, order) : problem(401, 'UNAUTHORIZED')));
    const api = createRestClient({ baseUrl: 'http://x.test', fetch });
    expect((await unwrap(api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } }))).id).toBe(1);
    await expect(unwrap(api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } }))).rejects.toMatchObject({ status: 401, code: 'UNAUTHORIZED', requestId: 'req-1' });
  });

  it.each([
    ['a GET', 'GET'],
    ['a PATCH with If-Match', 'PATCH'],
  ])('retries %s on 429 and 503, waiting Retry-After, and on a network error', async (_name, method) => {
    const waits: number[] = [];
    const answers = [
      () => problem(429, 'RATE_LIMITED', { 'retry-after': '2' }),
      () => problem(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '1' }),
      () => Promise.reject(new TypeError('fetch failed')),
      () => json(200, order),
    ];
    const { fetch, seen } = fake((_req, n) => answers[n - 1]());
    const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch, retry: { attempts: 4, sleep: (ms) => (waits.push(ms), Promise.resolve()) } });
    const path = { path: { orderId: 1 } };
    const res = method === 'GET' ? await api.GET('/v2/orders/{orderId}', { params: path }) : await api.PATCH('/v2/orders/{orderId}', { params: { ...path, header: { 'If-Match': '"1-1-v2"' } }, body: { note: 'x' } });
    expect(res.data?.id).toBe(1);
    expect(seen.map((s) => s.method)).toEqual([method, method, method, method]);
    expect(waits[0]).toBeGreaterThanOrEqual(2000);
    expect(waits[1]).toBeGreaterThanOrEqual(1000);
    expect(waits[1]).toBeLessThan(2000);
  });

  it('answers at once a 429 whose Retry-After is beyond maxDelayMs: a retry sooner would be refused again', async () => {
    let sleeps = 0;
    const { fetch, seen } = fake(() => problem(429, 'RATE_LIMITED', { 'retry-after': '43' }));
    const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch, retry: { maxDelayMs: 5000, sleep: () => (sleeps++, Promise.resolve()) } });
    await expect(api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } })).rejects.toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfterMs: 43000 });
    expect([seen.length, sleeps]).toEqual([1, 0]);
  });

  it('an aborted create fails at once with the AbortError: no retry, no backoff', async () => {
    const controller = new AbortController();
    let sleeps = 0;
    const { fetch, seen } = fake((req) => {
      controller.abort();
      return Promise.reject(req.signal.reason as Error);
    });
    const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch, retry: { sleep: () => (sleeps++, Promise.resolve()) } });
    const err = await api.POST('/v2/orders', { body: {}, signal: controller.signal }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(seen).toHaveLength(1);
    expect(sleeps).toBe(0);
  });

  it('a signal cancels the wait between retries too', async () => {
    const controller = new AbortController();
    // A wait within maxDelayMs (5 s by default): one beyond it is not waited at all.
    const { fetch } = fake(() => problem(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '4' }));
    const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch });
    const call = api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } }, signal: controller.signal });
    setImmediate(() => controller.abort());
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('timeoutMs fails a call that never answers with OrderlineError TIMEOUT', async () => {
    const { fetch } = fake((req) => new Promise((_resolve, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason as Error))));
    const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch, timeoutMs: 5 });
    await expect(api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } })).rejects.toMatchObject({ name: 'OrderlineError', code: 'TIMEOUT', status: 0 });
  });

  it('timeoutMs 0, negative, NaN or past what a timer can wait sets no timeout: a slow answer still arrives (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.constantFrom(0, -1, NaN, 2 ** 31, Infinity), fc.integer({ max: 0 }), fc.double({ min: 2 ** 31, noNaN: true })), async (timeoutMs) => {
        let answer!: () => void;
        // A fetch that answers when told, and fails as fetch does when its signal aborts.
        const { fetch } = fake(
          (req) =>
            new Promise<Response>((resolve, reject) => {
              answer = () => resolve(Response.json({ id: 1 }, { headers: { etag: '"1-1-v2j"' } }));
              req.signal.addEventListener('abort', () => reject(req.signal.reason as Error));
            }),
        );
        const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch, timeoutMs, retry: false });
        const call = api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } });
        // Timers that a bad timeout would have set fire first; then the answer comes.
        await new Promise((r) => setTimeout(r, 5));
        answer();
        expect((await call).response.status).toBe(200);
      }),
      { numRuns: 15 },
    );
  });

  it('no answer after the retries is OrderlineError NETWORK_ERROR with the cause', async () => {
    const { fetch } = fake(() => Promise.reject(new TypeError('fetch failed')));
    const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch, retry: noWait });
    await expect(api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } })).rejects.toMatchObject({ code: 'NETWORK_ERROR', status: 0, cause: expect.any(TypeError) });
  });

  it('asks a token function before every request, so a rotated token is used at once', async () => {
    let current = 'one';
    const { fetch, seen } = fake(() => json(200, order));
    const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch, cache: false, token: () => Promise.resolve(current) });
    await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } });
    current = 'two';
    await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } });
    expect(seen.map((s) => s.headers.get('authorization'))).toEqual(['Bearer one', 'Bearer two']);
  });

  it('gives a create an Idempotency-Key on an insecure origin (no crypto.randomUUID)', async () => {
    const randomUUID = Object.getOwnPropertyDescriptor(globalThis.crypto, 'randomUUID') ?? Object.getOwnPropertyDescriptor(Object.getPrototypeOf(globalThis.crypto), 'randomUUID');
    Object.defineProperty(globalThis.crypto, 'randomUUID', { value: undefined, configurable: true });
    try {
      const { fetch, seen } = fake(() => json(201, order));
      const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch });
      await api.POST('/v2/orders', { body: {} });
      expect(seen[0].headers.get('idempotency-key')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    } finally {
      delete (globalThis.crypto as { randomUUID?: unknown }).randomUUID;
      if (randomUUID && !('randomUUID' in globalThis.crypto)) Object.defineProperty(globalThis.crypto, 'randomUUID', randomUUID);
    }
  });

  it('updateOrder takes a signal', async () => {
    const controller = new AbortController();
    controller.abort();
    const { fetch, seen } = fake(() => json(200, order));
    const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch });
    await expect(updateOrder(api, 1, () => ({ note: 'x' }), { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toHaveLength(0);
  });

  it("pages with the server's default size, and hands out each page's cursor for a 'load more' view", async () => {
    const { fetch, seen } = fake((req) => {
      const page = new URL(req.url).searchParams.get('page');
      return json(200, page ? { orders: [{ ...order, id: 2 }], _links: { self: { href: '/v2/orders' } } } : { orders: [order], _links: { self: { href: '/v2/orders' }, next: { href: '/v2/orders?page=c2&limit=20' } } });
    });
    const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch });
    const first = await listOrders(api);
    expect(first).toEqual({ orders: [order], next: 'c2' });
    expect((await listOrders(api, { page: first.next })).next).toBeUndefined();
    const ids: number[] = [];
    for await (const o of allOrders(api)) ids.push(o.id);
    expect(ids).toEqual([1, 2]);
    expect(seen[0].path).toBe('/v2/orders');
  });
});
