/**
 * Defects found by third-party tools (Ajv, Prism, Redocly) and a new user, each shown
 * against the running service and the contract.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { join } from 'node:path';
import YAML from 'yaml';
import { startTestServer, type TestServer } from '../support/server';
import { expectContract } from '../support/contract';
import { json } from '../support/rest';
import { routes } from '../../generated/openapi/routes';
import { encodeCursor } from '../../src/orders';

const patch = (body: unknown, headers: Record<string, string>) => ({
  method: 'PATCH',
  headers: { 'content-type': 'application/merge-patch+json', ...headers },
  body: JSON.stringify(body),
});

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

async function create(body: unknown = { items: [{ sku: 'A', quantity: 2, unit_price_cents: 500 }] }) {
  const res = await s.fetch('/orders', { method: 'POST', ...json(body) });
  const order = (await expectContract('createOrder', res)) as { id: number };
  return { order, etag: res.headers.get('etag')! };
}

describe('an empty page', () => {
  it('conforms to the contract (anyOf: it is a list of either version)', async () => {
    const res = await s.fetch(`/orders?page=${encodeCursor(Number.MAX_SAFE_INTEGER - 1)}`);
    expect(res.status).toBe(200);
    expect(await expectContract('listOrders', res)).toMatchObject({ orders: [] });
    const validate = routes.find((r) => r.operationId === 'listOrders')!.responses['200']['application/json'];
    expect(validate({ orders: [], _links: { self: { href: '/orders' } } })).toBe(true);
  });
});

describe('If-None-Match on writes', () => {
  const writes = (id: number, headers: Record<string, string>) => [
    s.fetch(`/orders/${id}`, patch({ note: 'x' }, headers)),
    s.fetch(`/orders/${id}`, { method: 'PUT', ...json({ status: 'pending', items: [], currency: 'EUR', discount: null, note: 'y' }, headers) }),
    s.fetch(`/orders/${id}/cancel`, { method: 'POST', headers }),
  ];
  it('answers 412 to `*` or a current tag on PUT, PATCH and cancel, and changes nothing', async () => {
    const { order, etag } = await create();
    for (const headers of <Record<string, string>[]>[{ 'if-none-match': '*' }, { 'if-none-match': etag }, { 'if-none-match': `W/${etag}` }, { 'if-match': etag, 'if-none-match': '*' }]) {
      const [p, u, c] = await Promise.all(writes(order.id, headers));
      expect([p.status, u.status, c.status]).toEqual([412, 412, 412]);
      const bodies = [await expectContract('patchOrder', p), await u.json(), await expectContract('cancelOrder', c)] as { detail: string }[];
      // The detail names the failed condition: If-None-Match here, not a change of the order.
      for (const b of bodies) expect(b.detail).toMatch(/^If-None-Match names the order as it stands/);
    }
    const stale = await s.fetch(`/orders/${order.id}`, patch({ note: 'x' }, { 'if-match': '"1-0-v2j"', 'if-none-match': '*' }));
    expect(((await stale.json()) as { detail: string }).detail).toMatch(/^The order changed since that ETag/);
    expect((await s.store.getOrder(s.alice.account.id, order.id))!.revision).toBe(1);
  });
  it('lets a write through when If-None-Match names no current tag and If-Match matches', async () => {
    const { order, etag } = await create();
    const res = await s.fetch(`/orders/${order.id}`, patch({ note: 'x' }, { 'if-match': etag, 'if-none-match': '"0-0-v2j"' }));
    expect(res.status).toBe(200);
  });
});

describe('415 and 405 headers', () => {
  it('sends Accept-Patch with a 415 to PATCH only, never empty', async () => {
    const { order, etag } = await create();
    const post = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    const put = await s.fetch(`/orders/${order.id}`, { method: 'PUT', headers: { 'content-type': 'text/plain', 'if-match': etag }, body: '{}' });
    const pat = await s.fetch(`/orders/${order.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json', 'if-match': etag }, body: '{}' });
    expect([post.status, put.status, pat.status]).toEqual([415, 415, 415]);
    expect(post.headers.has('accept-patch')).toBe(false);
    expect(put.headers.has('accept-patch')).toBe(false);
    expect(pat.headers.get('accept-patch')).toBe('application/merge-patch+json');
  });
  it('declares the 405 it sends, with Allow, in the contract', async () => {
    const doc = YAML.parse(readFileSync(join(__dirname, '../../contracts/openapi.yaml'), 'utf8'));
    const declared = doc.components.responses.E405;
    expect(declared.headers.Allow.$ref).toBe('#/components/headers/Allow');
    expect(Object.keys(declared.content)).toEqual(['application/problem+json']);
    const res = await s.fetch('/orders/1', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toMatch(/GET/);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
  });
});

describe('validation errors', () => {
  it('come as one list naming the offending member and the rule', async () => {
    const res = await s.fetch('/orders', { method: 'POST', ...json({ colour: 'red' }) });
    expect(res.status).toBe(400);
    const body = (await expectContract('createOrder', res)) as { errors: unknown[] };
    expect(body.errors).toEqual([{ pointer: '/colour', rule: 'additionalProperties', message: 'must NOT have additional properties' }]);
  });
  it('name nested members on a versioned path too', async () => {
    const res = await s.fetch('/v2/orders', { method: 'POST', ...json({ items: [{ sku: 'A', quantity: 0, unit_price_cents: 1 }] }) });
    const body = (await expectContract('createOrderV2', res)) as { errors: unknown[] };
    expect(body.errors).toEqual([{ pointer: '/items/0/quantity', rule: 'minimum', message: 'must be >= 1' }]);
  });
});

describe('an unquoted If-Match', () => {
  it('is a 400 naming the header, not a 412, and changes nothing', async () => {
    const { order, etag } = await create();
    const unquoted = etag.replace(/"/g, '');
    const res = await s.fetch(`/orders/${order.id}`, patch({ note: 'x' }, { 'if-match': unquoted }));
    expect(res.status).toBe(400);
    const body = (await expectContract('patchOrder', res)) as { detail: string; errors: { pointer: string }[] };
    expect(body.detail).toMatch(/If-Match/);
    expect(body.errors[0].pointer).toBe('header:If-Match');
    expect((await s.store.getOrder(s.alice.account.id, order.id))!.revision).toBe(1);
  });
});

describe('events say what happened', () => {
  it('a note edit on a cancelled order is order.updated, not a second order.cancelled', async () => {
    const { order, etag } = await create();
    const cancel = await s.fetch(`/orders/${order.id}/cancel`, { method: 'POST', headers: { 'if-match': etag } });
    expect(cancel.status).toBe(200);
    const edit = await s.fetch(`/orders/${order.id}`, patch({ note: 'after' }, { 'if-match': cancel.headers.get('etag')! }));
    expect(edit.status).toBe(200);
    const events = await s.store.eventsAfter(order.id, 0, 10);
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.cancelled', 'order.updated']);
  });
});

describe('an unpaired surrogate in a JSON body (found by the contract fuzzer)', () => {
  it('is a 400 on create and patch (in a value or a member name), and nothing is stored', async () => {
    const { order, etag } = await create();
    const before = await s.store.getOrder(s.alice.account.id, order.id);
    // The escape is ASCII, so the body is valid UTF-8; the string it names is not text UTF-8 can carry.
    const lone = '{"note":"a\\ud800b"}';
    const refused = [
      await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: lone }),
      await s.fetch(`/orders/${order.id}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json', 'if-match': etag }, body: '{"items":[{"sku":"\\udfff","quantity":1,"unit_price_cents":1}]}' }),
      await s.fetch(`/orders/${order.id}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json', 'if-match': etag }, body: '{"note\\ud800":"x"}' }),
    ];
    for (const res of refused) {
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'BAD_REQUEST', detail: expect.stringContaining('unpaired surrogate') });
    }
    expect(await s.store.getOrder(s.alice.account.id, order.id)).toEqual(before);
  });

  it('leaves a surrogate pair alone: the escaped astral character is stored and read back as sent', async () => {
    const res = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"note":"\\ud83d\\ude00 ok"}' });
    const created = (await expectContract('createOrder', res)) as { id: number; note: string };
    expect(created.note).toBe('\u{1F600} ok');
    const read = (await (await s.fetch(`/orders/${created.id}`)).json()) as { note: string };
    expect(read.note).toBe('\u{1F600} ok');
  });
});

describe('If-Match on a read (RFC 9110 13.1.1: evaluated before any method)', () => {
  it('answers 412 when it names no tag of the selected representation, before If-None-Match; passes a match or *', async () => {
    const { order, etag } = await create();
    const at = `/orders/${order.id}`;
    for (const method of ['GET', 'HEAD']) {
      const wrong = await s.fetch(at, { method, headers: { 'if-match': '"nope"' } });
      expect(wrong.status).toBe(412);
      if (method === 'GET') expect(await wrong.json()).toMatchObject({ status: 412, code: 'PRECONDITION_FAILED' });
      // If-Match comes first: a held representation does not turn the 412 into a 304.
      expect((await s.fetch(at, { method, headers: { 'if-match': '"nope"', 'if-none-match': etag } })).status).toBe(412);
      expect((await s.fetch(at, { method, headers: { 'if-match': `W/${etag}` } })).status).toBe(412); // strong comparison
      expect((await s.fetch(at, { method, headers: { 'if-match': `"x", ${etag}` } })).status).toBe(200);
      expect((await s.fetch(at, { method, headers: { 'if-match': '*' } })).status).toBe(200);
      expect((await s.fetch(at, { method, headers: { 'if-match': etag, 'if-none-match': etag } })).status).toBe(304);
    }
  });

  it('holds on every read that declares an ETag, fails where there is none to match, and is ignored when the answer is an error', async () => {
    const doc = await s.fetch('/openapi.json', { as: 'anonymous' });
    const docTag = doc.headers.get('etag')!;
    expect((await s.fetch('/openapi.json', { as: 'anonymous', headers: { 'if-match': '"nope"' } })).status).toBe(412);
    expect((await s.fetch('/openapi.json', { as: 'anonymous', headers: { 'if-match': docTag } })).status).toBe(200);
    expect((await s.fetch('/orders?limit=1', { headers: { 'if-match': '"nope"' } })).status).toBe(412); // a list has no tag
    expect((await s.fetch('/orders?limit=1', { headers: { 'if-match': '*' } })).status).toBe(200);
    expect((await s.fetch('/orders/999999999', { headers: { 'if-match': '"nope"' } })).status).toBe(404); // 13.2.1
  });
});

describe('a body sent with a content coding', () => {
  const coding = fc.oneof(
    fc.constantFrom('gzip', 'br', 'deflate', 'zstd', 'x-gzip', 'compress', 'gzip, identity', 'identity, br', 'GZIP'),
    fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/).filter((c) => c !== 'identity'),
  );
  it('is refused 415 with Accept-Encoding: identity on every body reader, and stores nothing (generated)', async () => {
    const token = await s.tokenFor('coded');
    const as = { authorization: `Bearer ${token}` };
    const order = JSON.stringify({ items: [{ sku: 'Z', quantity: 1, unit_price_cents: 1 }] });
    await fc.assert(
      fc.asyncProperty(coding, async (enc) => {
        const created = await s.fetch('/orders', { method: 'POST', headers: { ...as, 'content-type': 'application/json', 'content-encoding': enc }, body: order });
        expect(created.status).toBe(415);
        expect(created.headers.get('accept-encoding')).toBe('identity');
        expect(await created.json()).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
        const gql = await s.fetch('/graphql', { method: 'POST', headers: { ...as, 'content-type': 'application/json', 'content-encoding': enc }, body: '{"query":"{ __typename }"}' });
        expect(gql.status).toBe(415);
        expect(gql.headers.get('accept-encoding')).toBe('identity');
        expect(((await gql.json()) as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBe('UNSUPPORTED_MEDIA_TYPE'); // REST's code for the same refusal
      }),
      { numRuns: 25 },
    );
    const list = (await (await s.fetch('/orders', { headers: as })).json()) as { orders: unknown[] };
    expect(list.orders).toEqual([]);
    // identity is no coding at all
    const plain = await s.fetch('/orders', { method: 'POST', headers: { ...as, 'content-type': 'application/json', 'content-encoding': 'identity' }, body: order });
    expect(plain.status).toBe(201);
  });
});

describe('preconditions on a create (the collection has representations but no entity tag)', () => {
  it('If-Match holds only as *, If-None-Match: * fails, a malformed one is a 400; a refused create stores nothing (generated)', async () => {
    const count = async () => ((await (await s.fetch('/orders?limit=100')).json()) as { orders: unknown[] }).orders.length;
    const field = fc.oneof(
      fc.constant(undefined),
      fc.constant('*'),
      fc.array(fc.stringMatching(/^[a-z0-9-]{1,8}$/), { minLength: 1, maxLength: 3 }).map((tags) => tags.map((t) => `"${t}"`).join(', ')),
      fc.stringMatching(/^[a-z]{1,8}$/), // no entity tag
    );
    const valid = (v: string | undefined) => v === undefined || v === '*' || v.startsWith('"');
    await fc.assert(
      fc.asyncProperty(field, field, fc.constantFrom('/orders', '/v1/orders', '/v2/orders'), async (im, inm, path) => {
        const before = await count();
        const headers: Record<string, string> = {};
        if (im !== undefined) headers['if-match'] = im;
        if (inm !== undefined) headers['if-none-match'] = inm;
        const res = await s.fetch(path, { method: 'POST', ...json({ items: [{ sku: 'P', quantity: 1, unit_price_cents: 1 }] }, headers) });
        const expected = !valid(im) || !valid(inm) ? 400 : (im !== undefined && im !== '*') || inm === '*' ? 412 : 201;
        expect(res.status).toBe(expected);
        if (expected !== 201) {
          expect(await res.json()).toMatchObject({ status: expected, code: expected === 412 ? 'PRECONDITION_FAILED' : 'VALIDATION_FAILED' });
          expect(await count()).toBe(before);
        }
      }),
      { numRuns: 40 },
    );
  });
});

describe('a refused parameter is named in the detail, as in errors[].pointer', () => {
  it.each([
    ['/orders/abc', 'path', 'orderId'],
    ['/orders/01', 'path', 'orderId'],
    ['/orders?limit=abc', 'query', 'limit'],
    ['/orders?limit=1&limit=2', 'query', 'limit'],
    ['/orders?limit=0', 'query', 'limit'],
  ])('%s', async (url, where, name) => {
    const res = await s.fetch(url);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { detail: string; errors: { pointer: string }[] };
    expect(body.detail).toBe(`Invalid ${where} parameter ${name}`);
    expect(body.errors.map((e) => e.pointer)).toContain(`${where}:${name}`);
  });
});
