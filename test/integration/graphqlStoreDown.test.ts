/**
 * GraphQL when the store cannot be reached while a query runs (the token already known to
 * the auth cache, so the request gets as far as the resolvers): 503 with Retry-After and
 * one error coded UNAVAILABLE, no partial `data`, nothing of the driver's message, as the
 * REST operations answer problem+json 503 (storeOutage.test.ts stops a real PostgreSQL).
 * The store double throws what the PostgreSQL adapter throws for a refused connection.
 */
import { StoreUnavailableError } from '../../src/store';
import { startTestServer, type TestServer } from '../support/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const down = () => Promise.reject(new StoreUnavailableError('postgres', { cause: new Error('connect ECONNREFUSED 127.0.0.1:5432') }));

it('a query whose resolver meets an unreachable store is a 503 UNAVAILABLE with Retry-After', async () => {
  const warm = await s.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ viewer { name } }' }) });
  expect(warm.status).toBe(200); // the token is in the auth cache now
  const { store } = s;
  const getOrder = store.getOrder.bind(store);
  store.getOrder = down;
  try {
    const res = await s.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: '{ order(id: "1") { id note } }' }),
    });
    const text = await res.text();
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(text)).toEqual({ errors: [expect.objectContaining({ message: 'The store is unavailable: retry later', extensions: { code: 'UNAVAILABLE' } })] });
    expect(text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/i);
  } finally {
    store.getOrder = getOrder;
  }
  const again = await s.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ order(id: "1") { id } }' }) });
  expect(again.status).toBe(200);
});
