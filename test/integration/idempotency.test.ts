/**
 * Idempotency-Key over HTTP (contract: the Idempotency-Key parameter, Idempotent-Replayed,
 * 409 / 422), on the embedded store and, in the `postgres` jest project, on PostgreSQL.
 */
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../support/server';
import { expectContract } from '../support/contract';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

let n = 0;
const newKey = () => `key-${process.pid}-${++n}-${Math.random().toString(36).slice(2)}`;
const post = (path: string, body: unknown, headers: Record<string, string> = {}, as: 'alice' | 'bob' = 'alice') =>
  s.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), as });
const countOrders = async (accountId = s.alice.account.id) => (await s.store.listOrders(accountId, 0, 100)).orders.length;
/** Status, the headers a replay must repeat, and the exact body bytes. */
const snapshot = async (res: Response) => ({
  status: res.status,
  headers: Object.fromEntries(['etag', 'location', 'content-type', 'cache-control', 'vary', 'api-version', 'sunset', 'deprecation'].map((h) => [h, res.headers.get(h)])),
  body: await res.text(),
});

describe('Idempotency-Key on POST /orders', () => {
  it.each([
    ['/orders', 'createOrder', { items: [{ sku: 'A', quantity: 1, unit_price_cents: 250 }], note: 'n' }],
    ['/v1/orders', 'createOrderV1', { discount_code: 'X', note: 'v1' }],
    ['/v2/orders', 'createOrderV2', { discount: { code: 'Y', percent: 5 } }],
  ] as const)('%s: a sequential retry replays the first response byte for byte, and creates nothing', async (path, op, body) => {
    const key = newKey();
    const before = await countOrders();
    const first = await post(path, body, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const original = await snapshot(first.clone());
    await expectContract(op, first);
    const retry = await post(path, body, { 'idempotency-key': key });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await snapshot(retry.clone())).toEqual(original);
    await expectContract(op, retry);
    expect(await countOrders()).toBe(before + 1);
  });

  it('accepts the key as a structured-field string ("...") as the same key', async () => {
    const key = newKey();
    await post('/orders', {}, { 'idempotency-key': key });
    const again = await post('/orders', {}, { 'idempotency-key': `"${key}"` });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('answers 422 to the same key with a different request, and changes nothing', async () => {
    const key = newKey();
    expect((await post('/orders', { note: 'one' }, { 'idempotency-key': key })).status).toBe(201);
    const before = await countOrders();
    for (const [path, body, headers] of [
      ['/orders', { note: 'two' }, {}],
      ['/v1/orders', { note: 'one' }, {}],
      ['/orders', { note: 'one' }, { 'api-version': '1' }],
    ] as const) {
      const res = await post(path, body, { 'idempotency-key': key, ...headers });
      expect(res.status).toBe(422);
      expect(await expectContract(path === '/orders' ? 'createOrder' : 'createOrderV1', res)).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    }
    expect(await countOrders()).toBe(before);
  });

  it('keeps keys per account', async () => {
    const key = newKey();
    const a = await post('/orders', { note: 'a' }, { 'idempotency-key': key });
    const b = await post('/orders', { note: 'a' }, { 'idempotency-key': key }, 'bob');
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.headers.get('location')).not.toBe(a.headers.get('location'));
  });

  it('creates exactly one order from 20 concurrent identical requests; the others replay it or get 409', async () => {
    const key = newKey();
    const before = await countOrders();
    const answers = await Promise.all(Array.from({ length: 20 }, () => post('/orders', { note: 'race' }, { 'idempotency-key': key })));
    const statuses = answers.map((r) => r.status);
    expect(statuses.every((st) => st === 201 || st === 409)).toBe(true);
    const created = answers.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.headers.get('location'))).size).toBe(1);
    for (const r of answers.filter((r) => r.status === 409)) {
      expect(r.headers.get('retry-after')).toBe('1');
      expect(await expectContract('createOrder', r)).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE' });
    }
    expect(await countOrders()).toBe(before + 1);
    // Once the first finished, every retry is a replay of it.
    const after = await post('/orders', { note: 'race' }, { 'idempotency-key': key });
    expect(after.headers.get('location')).toBe(created[0].headers.get('location'));
  });

  it('stores nothing for a failed request, so its retry runs (a 400 body, then a valid one)', async () => {
    const key = newKey();
    const bad = await post('/orders', { items: 'nope' }, { 'idempotency-key': key });
    expect(bad.status).toBe(400);
    const good = await post('/orders', { note: 'ok' }, { 'idempotency-key': key });
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
  });

  it('claims nothing for a request its contract refuses, so a concurrent valid retry is never told 409 by it', async () => {
    const claims = jest.spyOn(s.store, 'claimIdempotencyKey');
    try {
      await fc.assert(
        fc.asyncProperty(fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.dictionary(fc.string(), fc.string())), async (items) => {
          const res = await post('/orders', { items }, { 'idempotency-key': newKey() });
          expect(res.status).toBe(400);
        }),
        { numRuns: 25 },
      );
      expect(claims).not.toHaveBeenCalled();
      // A valid one does claim its key.
      expect((await post('/orders', { note: 'ok' }, { 'idempotency-key': newKey() })).status).toBe(201);
      expect(claims).toHaveBeenCalledTimes(1);
    } finally {
      claims.mockRestore();
    }
  });

  it('refuses a malformed key with 400', async () => {
    for (const key of ['', 'has space', 'x'.repeat(256), 'é']) {
      const res = await post('/orders', {}, { 'idempotency-key': key });
      if (key === '') continue; // fetch drops an empty header: no key at all
      expect(res.status).toBe(400);
    }
  });
});

describe('Idempotency-Key on POST /orders/{id}/cancel', () => {
  it('replays a successful cancel (without the key, the retry would be 409), and frees the key after a 412', async () => {
    const created = await post('/orders', {});
    const { id } = (await created.json()) as { id: number };
    const etag = created.headers.get('etag')!;
    const key = newKey();
    const stale = await post(`/orders/${id}/cancel`, undefined, { 'idempotency-key': key, 'if-match': '"nope"' });
    expect(stale.status).toBe(412);
    const first = await post(`/orders/${id}/cancel`, undefined, { 'idempotency-key': key, 'if-match': etag });
    expect(first.status).toBe(200);
    const original = await snapshot(first);
    const retry = await post(`/orders/${id}/cancel`, undefined, { 'idempotency-key': key, 'if-match': etag });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await snapshot(retry.clone())).toEqual(original);
    await expectContract('cancelOrder', retry);
    const events = await s.store.eventsAfter(id, 0, 10);
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.cancelled']);
    const withoutKey = await post(`/orders/${id}/cancel`, undefined, { 'if-match': (await s.fetch(`/orders/${id}`)).headers.get('etag')! });
    expect(withoutKey.status).toBe(409);
  });
});

describe('Idempotency-Key on the order writes (PUT, PATCH)', () => {
  it.each([
    ['PATCH', '/v2/orders', 'patchOrderV2', 'application/merge-patch+json', { note: 'once' }],
    ['PATCH', '/orders', 'patchOrder', 'application/merge-patch+json', { note: 'once' }],
    ['PUT', '/v2/orders', 'replaceOrderV2', 'application/json', { status: 'pending', items: [{ sku: 'A', quantity: 2, unit_price_cents: 100 }], currency: 'EUR', discount: null, note: 'once' }],
  ] as const)('%s %s/{id}: a retry whose first attempt applied replays its answer (without the key, the retry would be 412); the key with another body is 422', async (method, base, op, type, body) => {
    const created = await post(`${base}`, {});
    const { id } = (await created.json()) as { id: number };
    const etag = created.headers.get('etag')!;
    const key = newKey();
    const write = (b: unknown, headers: Record<string, string>) => s.fetch(`${base}/${id}`, { method, headers: { 'content-type': type, 'if-match': etag, ...headers }, body: JSON.stringify(b), as: 'alice' });
    const first = await write(body, { 'idempotency-key': key });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const original = await snapshot(first.clone());
    await expectContract(op, first);
    const retry = await write(body, { 'idempotency-key': key });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await snapshot(retry.clone())).toEqual(original);
    await expectContract(op, retry);
    expect((await s.store.eventsAfter(id, 0, 10)).map((e) => e.type)).toEqual(['order.created', 'order.updated']);
    expect((await write({ ...body, note: 'other' }, { 'idempotency-key': key })).status).toBe(422);
    expect((await write(body, {})).status).toBe(412);
  });
});
