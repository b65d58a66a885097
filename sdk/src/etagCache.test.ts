import fc from 'fast-check';
import { createOrderlineClient } from './client';

/** A server stub: each path has a current ETag; If-None-Match matching it gets a bodiless 304. */
function stub(etags: Map<string, string>, seen: string[]): typeof fetch {
  return async (input, init) => {
    const req = new Request(input, init);
    const path = new URL(req.url).pathname;
    const etag = etags.get(path) ?? '"0"';
    seen.push(`${path} ${req.headers.get('if-none-match') ?? '-'}`);
    if (req.headers.get('if-none-match') === etag) return new Response(null, { status: 304, headers: { etag } });
    return new Response(JSON.stringify({ path, etag }), { status: 200, headers: { etag, 'content-type': 'application/json' } });
  };
}

describe('EtagCache', () => {
  it('revalidates with If-None-Match and answers a 304 with the cached body', async () => {
    const seen: string[] = [];
    const { api, cache } = createOrderlineClient({ baseUrl: 'http://x.test', fetch: stub(new Map([['/v2/orders/1', '"a"']]), seen) });
    const first = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } });
    const second = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } });
    expect(second.response.status).toBe(200);
    expect(second.data).toEqual(first.data);
    expect(seen).toEqual(['/v2/orders/1 -', '/v2/orders/1 "a"']);
    expect(cache.hits).toBe(1);
  });

  it("passes a 304 to the caller's own If-None-Match on as it is: never the cache's older body", async () => {
    const seen: string[] = [];
    const etags = new Map([['/v2/orders/1', '"r1"']]);
    const { api, cache } = createOrderlineClient({ baseUrl: 'http://x.test', fetch: stub(etags, seen) });
    await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } }); // "r1" is cached
    etags.set('/v2/orders/1', '"r2"'); // written elsewhere; the caller holds "r2" and asks with it
    for (const inm of ['"r2"', '"r1"']) {
      const own = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 }, header: { 'If-None-Match': inm } } });
      expect([own.response.status, own.response.headers.get('etag')]).toEqual(inm === '"r2"' ? [304, '"r2"'] : [200, '"r2"']);
    }
    expect(cache.hits).toBe(0);
  });

  it("answers its own revalidation from the entry it sent, when a proxy weakened the 304's tag: never a bare 304", async () => {
    const weakening: typeof fetch = async (input, init) => {
      const req = new Request(input, init);
      if (req.headers.get('if-none-match') === '"a"') return new Response(null, { status: 304, headers: { etag: 'W/"a"' } });
      return new Response('{"x":1}', { status: 200, headers: { etag: '"a"', 'content-type': 'application/json' } });
    };
    const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch: weakening });
    await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } });
    const again = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } });
    expect([again.response.status, again.data]).toEqual([200, { x: 1 }]);
  });

  it("updates the cached response's header fields with the 304's", async () => {
    let n = 0;
    const server: typeof fetch = async (input, init) => {
      const req = new Request(input, init);
      const id = `req-${++n}`;
      if (req.headers.get('if-none-match') === '"a"') return new Response(null, { status: 304, headers: { etag: '"a"', 'x-request-id': id } });
      return new Response('{"x":1}', { status: 200, headers: { etag: '"a"', 'content-type': 'application/json', 'x-request-id': id } });
    };
    const { api } = createOrderlineClient({ baseUrl: 'http://x.test', fetch: server });
    await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } });
    const again = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } });
    expect([again.response.status, again.response.headers.get('x-request-id'), again.response.headers.get('content-type')]).toEqual([200, 'req-2', 'application/json']);
  });

  it('cacheSize 0 leaves revalidation to the platform: no If-None-Match from the SDK, nothing held', async () => {
    const seen: string[] = [];
    const { api, cache } = createOrderlineClient({ baseUrl: 'http://x.test', cacheSize: 0, fetch: stub(new Map(), seen) });
    await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } });
    await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 1 } } });
    expect(seen).toEqual(['/v2/orders/1 -', '/v2/orders/1 -']);
    expect([cache.size, cache.hits]).toEqual([0, 0]);
  });

  it('is bounded: past cacheSize the least recently used response goes first', async () => {
    const seen: string[] = [];
    const { api, cache } = createOrderlineClient({ baseUrl: 'http://x.test', cacheSize: 2, fetch: stub(new Map(), seen) });
    const get = (orderId: number) => api.GET('/v2/orders/{orderId}', { params: { path: { orderId } } });
    await get(1);
    await get(2);
    await get(1); // 1 is now the most recently used
    await get(3); // evicts 2
    expect(cache.size).toBe(2);
    seen.length = 0;
    await get(1);
    await get(2);
    expect(seen).toEqual(['/v2/orders/1 "0"', '/v2/orders/2 -']);
  });

  it('a burst of more distinct GETs than it holds: every call resolves with its own 200 body, never a bodiless 304 (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: 3 }), fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 2, maxLength: 10 }), async (s, cacheSize, ids) => {
        const plain = stub(new Map(), []);
        // The server's answers arrive in an order fast-check chooses: responses race revalidations.
        const racing: typeof fetch = (input, init) => s.schedule(plain(input, init));
        const { api } = createOrderlineClient({ baseUrl: 'http://x.test', cacheSize, fetch: racing });
        const get = (orderId: number) => api.GET('/v2/orders/{orderId}', { params: { path: { orderId } } });
        await s.waitFor(get(ids[0]));
        const calls = ids.map((id) => get(id).then((r) => ({ id, status: r.response.status, data: r.data as unknown })));
        const results = await s.waitFor(Promise.all(calls));
        for (const r of results) expect(r).toEqual({ id: r.id, status: 200, data: { path: `/v2/orders/${r.id}`, etag: '"0"' } });
      }),
    );
  });
});
