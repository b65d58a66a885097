/**
 * Invariant 6: bad input of any kind gets a 4xx problem+json, never a 5xx, and changes
 * nothing stored. Inputs are generated (fast-check) for every operation of the
 * contract, from the contract itself: bodies are arbitrary JSON values that the
 * operation's own generated validators reject, parameters and headers are arbitrary
 * strings.
 */
import fc from 'fast-check';
import { routes } from '../../generated/openapi/routes';
import { startTestServer, type TestServer } from '../support/server';
import { OPERATIONS } from '../support/fuzz/contract';
import { validOf } from '../support/fuzz/arbitraries';

let s: TestServer;
let orderId: number;
let etag: string;
beforeAll(async () => {
  s = await startTestServer();
  const res = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ note: 'keep me' }) });
  orderId = ((await res.json()) as { id: number }).id;
  etag = res.headers.get('etag')!;
});
afterAll(() => s.close());

const orderRoutes = routes.filter((r) => r.path.includes('orders'));
const RUNS = Number(process.env.FC_RUNS ?? 25);

/** The stored state that must not move: revision and event count. */
async function snapshot() {
  const order = await s.store.getOrder(s.alice.account.id, orderId);
  return { order, events: (await s.store.eventsAfter(orderId, 0, 1000)).length };
}

async function expectRefused(res: Response, label: string) {
  const text = await res.text();
  if (res.status >= 500 || res.status < 400) throw new Error(`${label}: expected 4xx, got ${res.status} ${text.slice(0, 200)}`);
  if (res.headers.get('content-type') !== 'application/problem+json') throw new Error(`${label}: ${res.status} without problem+json`);
  const body = JSON.parse(text) as { status: number; code: string };
  expect(body.status).toBe(res.status);
  expect(typeof body.code).toBe('string');
}

const path = (template: string, id: string | number) => template.replace('{orderId}', String(id));
// Header values fetch can send: visible ASCII and spaces (anything else is refused client-side).
const headerValue = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,60}[\x21-\x7e])?$/);

describe('a query parameter that is not an array, given twice', () => {
  const withSingles = routes.filter((r) => r.singleQueryParams.length > 0 && r.method === 'GET');
  it.each(withSingles.map((r) => [r.operationId, r] as const))('%s: 400 "may be given once", whatever its type and the two values (generated)', async (_, route) => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...route.singleQueryParams), fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), async (name, a, b) => {
        const res = await s.fetch(
          `${path(route.path, orderId)}?${new URLSearchParams([
            [name, a],
            [name, b],
          ])}`,
        );
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ pointer: `query:${name}`, rule: 'once', message: 'may be given once' }] });
      }),
      { numRuns: 20 },
    );
  });
});

describe('bad input never gets a 5xx and changes nothing', () => {
  const withBody = orderRoutes.filter((r) => r.body);
  it.each(withBody.map((r) => [r.operationId, r] as const))('%s: bodies its validators reject', async (_, route) => {
    const before = await snapshot();
    const cts = Object.entries(route.body!.contentTypes);
    await fc.assert(
      fc.asyncProperty(
        fc.jsonValue().filter((v) => cts.every(([, validate]) => !validate(v))),
        fc.constantFrom(...cts.map(([ct]) => ct)),
        async (body, contentType) => {
          const res = await s.fetch(path(route.path, orderId), {
            method: route.method,
            headers: { 'content-type': contentType, 'if-match': etag },
            body: JSON.stringify(body),
          });
          await expectRefused(res, `${route.operationId} ${JSON.stringify(body).slice(0, 80)}`);
        },
      ),
      { numRuns: RUNS },
    );
    expect(await snapshot()).toEqual(before);
  });

  it.each(withBody.map((r) => [r.operationId, r] as const))('%s: a valid body with a member repeated (I-JSON) is a 400 naming it', async (_, route) => {
    const before = await snapshot();
    const op = OPERATIONS.find((o) => o.operationId === route.operationId)!;
    const cts = Object.entries(route.body!.contentTypes);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...cts).chain(([ct, validate]) =>
          fc.tuple(
            fc.constant(ct),
            validOf(op.body![ct], { medium: 'json' }).filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null && Object.keys(v).length > 0 && validate(JSON.parse(JSON.stringify(v)))),
            fc.nat(),
            fc.boolean(),
          ),
        ),
        async ([contentType, body, pick, first]) => {
          // The body as JSON.parse keeps it (the last value wins), with one member also written once more before or after.
          const entries = Object.entries(body);
          const [name, value] = entries[pick % entries.length];
          const members = entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
          const extra = `${JSON.stringify(name)}:${JSON.stringify(value)}`;
          const text = `{${(first ? [extra, ...members] : [...members, extra]).join(',')}}`;
          const res = await s.fetch(path(route.path, orderId), { method: route.method, headers: { 'content-type': contentType, 'if-match': etag }, body: text });
          const problem = (await res.clone().json()) as { code?: string; detail?: string; errors?: { pointer: string; rule: string }[] };
          await expectRefused(res, `${route.operationId} ${text.slice(0, 80)}`);
          expect({ status: res.status, code: problem.code, names: problem.detail?.includes(`"${name}"`), error: problem.errors?.[0] }).toEqual({
            status: 400,
            code: 'BAD_REQUEST',
            names: true,
            error: { pointer: `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, rule: 'duplicate-member', message: expect.any(String) },
          });
        },
      ),
      { numRuns: RUNS },
    );
    expect(await snapshot()).toEqual(before);
  });

  it.each(withBody.map((r) => [r.operationId, r] as const))('%s: bytes that are not JSON', async (_, route) => {
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 200 }).filter((t) => {
          try {
            JSON.parse(t);
            return false;
          } catch {
            return true;
          }
        }),
        async (raw) => {
          const res = await s.fetch(path(route.path, orderId), {
            method: route.method,
            headers: { 'content-type': Object.keys(route.body!.contentTypes)[0], 'if-match': etag },
            body: raw,
          });
          await expectRefused(res, `${route.operationId} raw`);
        },
      ),
      { numRuns: RUNS },
    );
    expect(await snapshot()).toEqual(before);
  });

  it.each(orderRoutes.filter((r) => r.path.includes('{orderId}')).map((r) => [r.operationId, r] as const))('%s: order ids that are not positive integers', async (_, route) => {
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(
        // "." and ".." are dot-segments the client's URL parser resolves away before sending.
        fc.oneof(
          fc.stringMatching(/^[A-Za-z0-9._~-]{1,30}$/).filter((t) => !/^[1-9][0-9]{0,15}$/.test(t) && t !== '.' && t !== '..'),
          fc.constantFrom('0', '-1', '1e3', '99999999999999999999'),
        ),
        async (id) => {
          const res = await s.fetch(path(route.path, id), {
            method: route.method,
            headers: { 'content-type': 'application/json', 'if-match': etag },
            body: route.body ? '{}' : undefined,
          });
          if (route.method === 'HEAD') {
            expect(res.status).toBeGreaterThanOrEqual(400);
            expect(res.status).toBeLessThan(500);
          } else await expectRefused(res, `${route.operationId} id=${id}`);
        },
      ),
      { numRuns: RUNS },
    );
    expect(await snapshot()).toEqual(before);
  });

  it.each(orderRoutes.map((r) => [r.operationId, r] as const))('%s: arbitrary Accept, Api-Version and precondition headers', async (_, route) => {
    await fc.assert(
      fc.asyncProperty(fc.record({ accept: headerValue, 'api-version': headerValue, 'if-match': headerValue, 'if-none-match': headerValue }, { requiredKeys: [] }), async (headers) => {
        const before = await snapshot();
        const res = await s.fetch(path(route.path, orderId), {
          method: route.method,
          headers: { ...headers, ...(route.body ? { 'content-type': 'application/merge-patch+json' } : {}) },
          body: route.body ? '{"note":"changed"}' : undefined,
        });
        expect(res.status).toBeLessThan(500);
        await res.arrayBuffer();
        // Only a 2xx write may change the order (a random If-Match matches only as "*").
        if (res.status >= 300 || route.method === 'GET' || route.method === 'HEAD') expect(await snapshot()).toEqual(before);
      }),
      { numRuns: RUNS, examples: [[{ 'if-match': '*' }], [{ 'api-version': '99' }], [{ accept: 'application/vnd.orderline.order+json; version=abc' }]] },
    );
  });

  it('collection: arbitrary page and limit values', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 300 }), fc.oneof(fc.integer().map(String), fc.string({ maxLength: 10 })), async (page, limit) => {
        const res = await s.fetch(`/orders?${new URLSearchParams({ page, limit })}`);
        expect(res.status).toBeLessThan(500);
        await res.arrayBuffer();
      }),
      { numRuns: RUNS * 4 },
    );
  });
});
