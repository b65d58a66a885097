import { startTestServer, type TestServer } from '../support/server';
import { expectContract } from '../support/contract';
import { json } from '../support/rest';

const VND = 'application/vnd.orderline.order+json';
const patch = (body: unknown, ifMatch?: string, extra: Record<string, string> = {}) => ({
  method: 'PATCH',
  headers: { 'content-type': 'application/merge-patch+json', ...(ifMatch ? { 'if-match': ifMatch } : {}), ...extra },
  body: JSON.stringify(body),
});

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

async function create(body: unknown = { items: [{ sku: 'A', quantity: 2, unit_price_cents: 500 }] }) {
  const res = await s.fetch('/orders', { method: 'POST', ...json(body) });
  const order = (await expectContract('createOrder', res)) as { id: number; status: string };
  return { res, order, etag: res.headers.get('etag')! };
}

describe('authentication', () => {
  it('answers 401 with a Bearer challenge without a token or with a bad one', async () => {
    for (const headers of [{}, { authorization: 'Bearer nope' }, { authorization: 'Basic abc' }] as Record<string, string>[]) {
      const res = await s.fetch('/orders', { as: 'anonymous', headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      await expectContract('listOrders', res);
    }
  });
  it("hides another account's order behind 404 for every method", async () => {
    const { order, etag } = await create();
    const as = 'bob' as const;
    expect((await s.fetch(`/orders/${order.id}`, { as })).status).toBe(404);
    expect((await s.fetch(`/orders/${order.id}`, { as, method: 'HEAD' })).status).toBe(404);
    expect((await s.fetch(`/orders/${order.id}`, { as, ...patch({ note: 'x' }, etag) })).status).toBe(404);
    const full = { status: 'pending', items: [], currency: 'EUR', discount: null, note: 'mine now' };
    expect((await s.fetch(`/orders/${order.id}`, { as, method: 'PUT', ...json(full, { 'if-match': etag }) })).status).toBe(404);
    expect((await s.fetch(`/orders/${order.id}/cancel`, { as, method: 'POST', headers: { 'if-match': etag } })).status).toBe(404);
    const list = (await (await s.fetch('/orders?limit=100', { as })).json()) as { orders: { id: number }[] };
    expect(list.orders.map((o) => o.id)).not.toContain(order.id);
    expect((await s.store.getOrder(s.alice.account.id, order.id))!.revision).toBe(1);
  });
});

describe('create and read', () => {
  it('creates with 201, Location and ETag, and reads it back', async () => {
    const { res, order, etag } = await create({ items: [{ sku: 'A', quantity: 3, unit_price_cents: 1000 }], discount: { code: 'TEN', percent: 10 }, note: 'hi' });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/orders/${order.id}`);
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(order).toMatchObject({ status: 'pending', total_cents: 2700, currency: 'EUR', discount: { code: 'TEN', percent: 10 }, note: 'hi' });
    const got = await s.fetch(`/orders/${order.id}`);
    expect(got.status).toBe(200);
    expect(got.headers.get('etag')).toBe(etag);
    expect(got.headers.get('cache-control')).toBe('private, max-age=0, must-revalidate');
    expect(got.headers.get('vary')).toContain('Accept');
    expect(await expectContract('getOrder', got)).toEqual(order);
  });
  it('creates an empty pending order from {}', async () => {
    const { order } = await create({});
    expect(order).toMatchObject({ status: 'pending', total_cents: 0 });
  });
  it('answers 304 with no body but ETag, Cache-Control and Vary when If-None-Match matches', async () => {
    const { order, etag } = await create();
    for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const res = await s.fetch(`/orders/${order.id}`, { headers: { 'if-none-match': inm } });
      expect(res.status).toBe(304);
      expect(res.headers.get('etag')).toBe(etag);
      expect(res.headers.get('cache-control')).toBe('private, max-age=0, must-revalidate');
      expect(res.headers.get('vary')).toContain('Accept');
      expect(await res.text()).toBe('');
    }
    expect((await s.fetch(`/orders/${order.id}`, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
  });
  it('keeps 404 for a missing order whatever the preconditions', async () => {
    expect((await s.fetch('/orders/999999', { headers: { 'if-none-match': '*' } })).status).toBe(404);
    expect((await s.fetch('/orders/999999', patch({ note: 'x' }))).status).toBe(404);
    expect((await s.fetch('/orders/999999', patch({ note: 'x' }, '*'))).status).toBe(404);
  });
  it('answers HEAD with the headers of GET and no body', async () => {
    const { order } = await create();
    const get = await s.fetch(`/orders/${order.id}`);
    const head = await s.fetch(`/orders/${order.id}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    for (const h of ['etag', 'cache-control', 'vary', 'content-type', 'api-version']) expect(head.headers.get(h)).toBe(get.headers.get(h));
    await expectContract('headOrder', head);
  });
});

describe('conditional writes', () => {
  it('refuses a write without If-Match with 428 and a stale one with 412, changing nothing', async () => {
    const { order, etag } = await create();
    const r428 = await s.fetch(`/orders/${order.id}`, patch({ note: 'x' }));
    expect(r428.status).toBe(428);
    await expectContract('patchOrder', r428);
    const r412 = await s.fetch(`/orders/${order.id}`, patch({ note: 'x' }, '"stale"'));
    expect(r412.status).toBe(412);
    await expectContract('patchOrder', r412);
    const weak = await s.fetch(`/orders/${order.id}`, patch({ note: 'x' }, `W/${etag}`));
    expect(weak.status).toBe(412);
    const stored = await s.store.getOrder(s.alice.account.id, order.id);
    expect(stored).toMatchObject({ revision: 1, note: null });
    expect(await s.store.eventsAfter(order.id, 0, 10)).toHaveLength(1);
  });
  it('applies a merge patch with a matching If-Match, new ETag and one event', async () => {
    const { order, etag } = await create({ items: [{ sku: 'A', quantity: 1, unit_price_cents: 100 }], note: 'a', discount: { code: 'X', percent: 5 } });
    const res = await s.fetch(`/orders/${order.id}`, patch({ note: null, status: 'paid', discount: { percent: 50 } }, etag));
    const body = (await expectContract('patchOrder', res)) as Record<string, unknown>;
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ note: null, status: 'paid', discount: { code: 'X', percent: 50 }, total_cents: 50 });
    expect(res.headers.get('etag')).not.toBe(etag);
    const events = await s.store.eventsAfter(order.id, 0, 10);
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [1, 'order.created'],
      [2, 'order.updated'],
    ]);
  });
  it('answers a write that changes nothing with 200 and the same ETag, without a new revision or event', async () => {
    const { order, etag } = await create({ note: 'same' });
    const res = await s.fetch(`/orders/${order.id}`, patch({ note: 'same' }, etag));
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe(etag);
    expect(await expectContract('patchOrder', res)).toMatchObject({ note: 'same' });
    expect(await s.store.eventsAfter(order.id, 0, 10)).toHaveLength(1);
  });
  it('replaces with PUT', async () => {
    const { order, etag } = await create({ note: 'old' });
    const res = await s.fetch(`/orders/${order.id}`, {
      method: 'PUT',
      ...json({ status: 'pending', items: [{ sku: 'B', quantity: 1, unit_price_cents: 7 }], currency: 'USD', discount: null, note: null }, { 'if-match': etag }),
    });
    expect(await expectContract('replaceOrder', res)).toMatchObject({ currency: 'USD', note: null, total_cents: 7 });
  });
  it('enforces status transitions with 409', async () => {
    const { order, etag } = await create();
    const res = await s.fetch(`/orders/${order.id}`, patch({ status: 'delivered' }, etag));
    expect(res.status).toBe(409);
    await expectContract('patchOrder', res);
  });
  it('cancels a pending order once, then 409', async () => {
    const { order, etag } = await create();
    const res = await s.fetch(`/orders/${order.id}/cancel`, { method: 'POST', headers: { 'if-match': etag } });
    const body = (await expectContract('cancelOrder', res)) as { status: string; _links: Record<string, unknown> };
    expect(body.status).toBe('cancelled');
    expect(body._links.cancel).toBeUndefined();
    const again = await s.fetch(`/orders/${order.id}/cancel`, { method: 'POST', headers: { 'if-match': res.headers.get('etag')! } });
    expect(again.status).toBe(409);
  });
  it('applies exactly one of 20 concurrent writes carrying the same If-Match', async () => {
    const { order, etag } = await create();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.fetch(`/orders/${order.id}`, patch({ note: `w${i}` }, etag)).then((r) => r.status)));
    expect(results.filter((st) => st === 200)).toHaveLength(1);
    expect(results.filter((st) => st === 412)).toHaveLength(19);
    expect((await s.store.getOrder(s.alice.account.id, order.id))!.revision).toBe(2);
    expect(await s.store.eventsAfter(order.id, 0, 100)).toHaveLength(2);
  });
});

describe('versions and negotiation', () => {
  it('serves v1 with discount_code and deprecation headers, v2 with discount, from the same write', async () => {
    const { order } = await create({ discount: { code: 'SAVE', percent: 20 } });
    const v1 = await s.fetch(`/v1/orders/${order.id}`);
    const b1 = (await expectContract('getOrderV1', v1)) as Record<string, unknown>;
    expect(b1.discount_code).toBe('SAVE');
    expect(b1).not.toHaveProperty('discount');
    expect(v1.headers.get('sunset')).toBe('Wed, 30 Jun 2027 23:59:59 GMT');
    expect(v1.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(v1.headers.get('link')).toMatch(/rel="deprecation"/);
    const v2 = await s.fetch(`/v2/orders/${order.id}`);
    const b2 = (await expectContract('getOrderV2', v2)) as Record<string, unknown>;
    expect(b2.discount).toEqual({ code: 'SAVE', percent: 20 });
    expect(b2).not.toHaveProperty('discount_code');
    expect(v2.headers.get('sunset')).toBeNull();
    expect(v1.headers.get('etag')).not.toBe(v2.headers.get('etag'));
  });
  it('echoes the vendor media type, with its own ETag', async () => {
    const { order } = await create();
    const res = await s.fetch(`/orders/${order.id}`, { headers: { accept: `${VND};v=1` } });
    expect(res.headers.get('content-type')).toBe(`${VND}; version=1`);
    expect(res.headers.get('vary')).toContain('Accept');
    await expectContract('getOrder', res);
    const plain = await s.fetch(`/orders/${order.id}`, { headers: { 'api-version': '1' } });
    expect(plain.headers.get('content-type')).toBe('application/json');
    expect(plain.headers.get('etag')).not.toBe(res.headers.get('etag'));
  });
  it('answers 406 to unknown versions and 404 to unknown version paths', async () => {
    const { order } = await create();
    for (const headers of [{ accept: `${VND}; version=7` }, { 'api-version': '9' }, { accept: 'text/html' }] as Record<string, string>[]) {
      const res = await s.fetch(`/orders/${order.id}`, { headers });
      expect(res.status).toBe(406);
      await expectContract('getOrder', res);
    }
    expect((await s.fetch(`/v3/orders/${order.id}`)).status).toBe(404);
  });
  it("honours the account's pinned version", async () => {
    const { order } = await create();
    await s.store.setPinnedVersion(s.alice.account.id, 1);
    s.authCache.clear(); // the account is cached with the token for AUTH_CACHE_TTL_MS
    try {
      const res = await s.fetch(`/orders/${order.id}`);
      expect(res.headers.get('api-version')).toBe('1');
      expect(await res.json()).toHaveProperty('discount_code');
    } finally {
      await s.store.setPinnedVersion(s.alice.account.id, null);
      s.authCache.clear();
    }
  });
  it('writes through v1 and reads through v2', async () => {
    const { order, etag } = await create();
    const res = await s.fetch(`/v1/orders/${order.id}`, patch({ discount_code: 'OLD' }, etag));
    expect(await expectContract('patchOrderV1', res)).toMatchObject({ discount_code: 'OLD' });
    const v2 = await (await s.fetch(`/v2/orders/${order.id}`)).json();
    expect(v2.discount).toEqual({ code: 'OLD', percent: 0 });
  });
  it('reads a body whose media type names no version as either version’s, as the contract’s anyOf says', async () => {
    // Negotiated version 2, a version 1 body: read as version 1, answered in version 2.
    // The client is told its body's version is deprecated, and counted like a reader of the field.
    const before = await s.scrape();
    const v1Body = await s.fetch('/orders', { method: 'POST', ...json({ discount_code: 'OLD' }) });
    expect(await expectContract('createOrder', v1Body)).toMatchObject({ discount: { code: 'OLD', percent: 0 } });
    expect([v1Body.headers.get('api-version'), v1Body.headers.get('sunset')]).toEqual(['2', 'Wed, 30 Jun 2027 23:59:59 GMT']);
    const count = (text: string) => Number(/orderline_deprecated_field_reads_total\{account="alice",field="discount_code"\} (\d+)/.exec(text)?.[1] ?? 0);
    expect(count(await s.scrape())).toBe(count(before) + 1);
    // Version 1 negotiated, a version 2 body: read as version 2, answered in version 1.
    const v2Body = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json', 'api-version': '1' }, body: JSON.stringify({ discount: { code: 'NEW', percent: 5 } }) });
    expect(await expectContract('createOrder', v2Body)).toMatchObject({ discount_code: 'NEW' });
    // A merge patch and a replacement too.
    const { order, etag } = await create({ discount: { code: 'X', percent: 10 } });
    const patched = await s.fetch(`/orders/${order.id}`, patch({ discount_code: null }, etag));
    expect(await expectContract('patchOrder', patched)).toMatchObject({ discount: null });
    const replaceV1 = { status: 'pending', items: [], currency: 'EUR', discount_code: 'PUT', note: null };
    const replaced = await s.fetch(`/orders/${order.id}`, { method: 'PUT', headers: { 'content-type': 'application/json', 'if-match': patched.headers.get('etag')! }, body: JSON.stringify(replaceV1) });
    expect(await expectContract('replaceOrder', replaced)).toMatchObject({ discount: { code: 'PUT', percent: 0 } });
    expect(replaced.headers.get('sunset')).toBe('Wed, 30 Jun 2027 23:59:59 GMT');
    // Where the version is named, by the media type or the path, that version's schema alone decides.
    const named = [
      s.fetch('/orders', { method: 'POST', headers: { 'content-type': `${VND}; version=2` }, body: JSON.stringify({ discount_code: 'OLD' }) }),
      s.fetch('/v2/orders', { method: 'POST', ...json({ discount_code: 'OLD' }) }),
      s.fetch('/v1/orders', { method: 'POST', ...json({ discount: { code: 'NEW', percent: 5 } }) }),
    ];
    for (const [i, res] of (await Promise.all(named)).entries()) {
      expect([i, res.status]).toEqual([i, 400]);
      expect(await res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    // A body neither version accepts.
    const neither = await s.fetch('/orders', { method: 'POST', ...json({ discount_code: 'OLD', discount: { code: 'NEW', percent: 5 } }) });
    expect(neither.status).toBe(400);
    expect(await expectContract('createOrder', neither)).toMatchObject({ code: 'VALIDATION_FAILED' });
  });
  it('refuses U+0000 in text members on every store, before the store sees it', async () => {
    const before = (await create()).order.id;
    for (const body of [{ note: 'a\u0000b' }, { items: [{ sku: '\u0000', quantity: 1, unit_price_cents: 1 }] }, { discount: { code: 'C\u0000', percent: 1 } }]) {
      const res = await s.fetch('/orders', { method: 'POST', ...json(body) });
      expect(res.status).toBe(400);
      const problem = (await expectContract('createOrder', res)) as { code: string; errors: { pointer: string; rule: string }[] };
      expect(problem.code).toBe('VALIDATION_FAILED');
      expect(problem.errors.some((e) => e.rule === 'pattern')).toBe(true);
    }
    // Nothing was stored, nor an id taken: the next order is the next id.
    expect((await create()).order.id).toBe(before + 1);
  });
  it('counts reads of the deprecated field per account in the operators’ /metrics', async () => {
    const { order } = await create();
    await s.fetch(`/v1/orders/${order.id}`);
    const text = await s.scrape();
    expect(text).toMatch(/orderline_deprecated_field_reads_total\{account="alice",field="discount_code"\} [1-9]/);
  });
});

describe('collection', () => {
  it('visits every order exactly once following _links.next while orders are inserted', async () => {
    const before = new Set<number>();
    let next: string | undefined = '/v2/orders?limit=3';
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) before.add((await create()).order.id);
    while (next) {
      const res = await s.fetch(next);
      const page = (await expectContract('listOrdersV2', res)) as { orders: { id: number }[]; _links: { next?: { href: string } } };
      seen.push(...page.orders.map((o) => o.id));
      await create(); // inserted while paging: appended after the cursor, so seen once
      next = page._links.next?.href;
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
  });
  it('rejects a forged cursor and an out-of-range limit with 400', async () => {
    expect((await s.fetch('/orders?page=Zm9v')).status).toBe(400);
    expect((await s.fetch('/orders?limit=0')).status).toBe(400);
    expect((await s.fetch('/orders?limit=101')).status).toBe(400);
  });
});

describe('errors at the edge', () => {
  it('answers problem+json 404 to unknown routes and 405 with Allow to unknown methods', async () => {
    const r404 = await s.fetch('/nope');
    expect(r404.status).toBe(404);
    expect(r404.headers.get('content-type')).toBe('application/problem+json');
    const r405 = await s.fetch('/orders/1', { method: 'DELETE' });
    expect(r405.status).toBe(405);
    expect(r405.headers.get('allow')).toMatch(/GET/);
    expect((await r405.json()).code).toBe('METHOD_NOT_ALLOWED');
  });
  it('answers 400 to malformed JSON, 415 to other media types, 413 to big bodies', async () => {
    const bad = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"items":' });
    expect(bad.status).toBe(400);
    const r415 = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect(r415.status).toBe(415);
    // JSON in another charset would be misread as UTF-8: 415, nothing stored; a UTF-8 one is fine, in any spelling.
    for (const charset of ['iso-8859-1', 'latin1', 'utf-16', '"us-ascii"']) {
      const other = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': `application/json; charset=${charset}` }, body: '{}' });
      expect([charset, other.status, ((await other.json()) as { code: string }).code]).toEqual([charset, 415, 'UNSUPPORTED_MEDIA_TYPE']);
    }
    for (const charset of ['utf-8', 'UTF-8', 'utf8', '"utf-8"']) {
      const utf8 = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': `application/json; charset=${charset}` }, body: '{}' });
      expect([charset, utf8.status]).toEqual([charset, 201]);
    }
    // A parameter named twice is no media type: nothing stored, whichever order the two come in.
    const before = ((await (await s.fetch('/orders?limit=100')).json()) as { orders: unknown[] }).orders.length;
    for (const charsets of ['charset=utf-8; charset=latin1', 'charset=latin1; charset=utf-8']) {
      const twice = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': `application/json; ${charsets}` }, body: '{}' });
      expect([charsets, twice.status]).toEqual([charsets, 415]);
    }
    for (const versions of ['version=1; version=2', 'version=2; version=1']) {
      const accept = await s.fetch('/orders/1', { headers: { accept: `application/vnd.orderline.order+json; ${versions}` } });
      expect([versions, accept.status]).toEqual([versions, 406]);
    }
    expect(((await (await s.fetch('/orders?limit=100')).json()) as { orders: unknown[] }).orders).toHaveLength(before);
    const big = await s.fetch('/orders', { method: 'POST', ...json({ note: 'x'.repeat(200_000) }) });
    expect(big.status).toBe(413);
    for (const r of [bad, r415, big]) expect(r.headers.get('content-type')).toBe('application/problem+json');
  });
  it('answers /healthz and /readyz without a token', async () => {
    expect(await expectContract('getHealth', await s.fetch('/healthz', { as: 'anonymous' }))).toEqual({ status: 'ok' });
    expect(await expectContract('getReady', await s.fetch('/readyz', { as: 'anonymous' }))).toMatchObject({ status: 'ready' });
  });
});

describe('one URL per resource', () => {
  it('refuses non-canonical integers in paths, queries and headers with 400', async () => {
    const { order } = await create();
    for (const p of [`/orders/0${order.id}`, `/orders/${order.id}.`, `/orders/${order.id}.0`, `/orders/${order.id}e0`, '/orders?limit=05', '/orders?limit=5.']) {
      expect({ p, status: (await s.fetch(p)).status }).toEqual({ p, status: 400 });
    }
    expect((await s.fetch(`/orders/${order.id}`, { headers: { 'api-version': '2.0' } })).status).toBe(400);
  });
});

describe('shareable resources', () => {
  it('serves /docs publicly cacheable, revalidates with 304, and holds the deprecation link target', async () => {
    const res = await s.fetch('/docs', { as: 'anonymous' });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    const html = await res.text();
    expect(html).toContain('href="/section/versioning"'); // Redoc's route to the contract's "Versioning" heading
    expect(html).toContain('"operationId":"patchOrderV2"');
    const again = await s.fetch('/docs', { as: 'anonymous', headers: { 'if-none-match': res.headers.get('etag')! } });
    expect(again.status).toBe(304);
    expect(again.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await again.text()).toBe('');
    const v1 = await s.fetch(`/v1/orders/${(await create()).order.id}`);
    expect(v1.headers.get('link')).toContain('</docs#/section/versioning>');
  });
});

describe('tokens', () => {
  it('refuses a real selector with a forged verifier', async () => {
    const selector = s.alice.token.slice(3, 19); // ol_<16-char selector>_<verifier>; selectors may contain "_"
    const forged = `ol_${selector}_${'A'.repeat(43)}`;
    const res = await s.fetch('/orders', { as: 'anonymous', headers: { authorization: `Bearer ${forged}` } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('invalid_token');
  });
});
