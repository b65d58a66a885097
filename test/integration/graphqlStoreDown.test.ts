/**
 * GraphQL when the store cannot be reached while a query runs (the token already known to
 * the auth cache, so the request gets as far as the resolvers): 503 with Retry-After and
 * one error coded UNAVAILABLE, no partial `data`, nothing of the driver's message, as the
 * REST operations answer problem+json 503 (storeOutage.test.ts stops a real PostgreSQL).
 * The store double throws what the PostgreSQL adapter throws for a refused connection.
 */
import { StoreUnavailableError } from '../../src/store';
import { connectGraphqlWs, openGraphqlWs, subscribe } from '../support/graphqlWs';
import { WsClient } from '../support/streams';
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

it('a token in connection_init that cannot be checked (the store unreachable) closes 1013, which graphql-ws clients retry, not 4500', async () => {
  const spy = jest.spyOn(s.store, 'tokenBySelector').mockImplementation(down);
  s.authCache.clear();
  try {
    const c = await openGraphqlWs(s, { headerToken: null });
    if (!(c instanceof WsClient)) throw new Error('refused');
    c.send({ type: 'connection_init', payload: { authorization: `Bearer ${s.alice.token}` } });
    expect(await c.closed()).toBe(1013);
  } finally {
    spy.mockRestore();
  }
  const again = await connectGraphqlWs(s, { headerToken: null, init: { authorization: `Bearer ${s.alice.token}` } });
  again.ws.close();
});

it('a subscription that cannot start because the store is unreachable is an error coded UNAVAILABLE, the connection kept', async () => {
  const created = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  const { id } = (await created.json()) as { id: number };
  const c = await connectGraphqlWs(s);
  const { store } = s;
  const getOrder = store.getOrder.bind(store);
  store.getOrder = down;
  try {
    subscribe(c, 's1', { id: String(id) });
    await c.until((m) => m.some((x) => x.type === 'error' && x.id === 's1'));
    const error = c.messages.find((x) => x.type === 'error' && x.id === 's1');
    expect(error).toEqual({ type: 'error', id: 's1', payload: [{ message: 'The store is unavailable: subscribe again later', extensions: { code: 'UNAVAILABLE' } }] });
    expect(JSON.stringify(error)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/i);
  } finally {
    store.getOrder = getOrder;
  }
  // Once the store is back the same connection subscribes.
  subscribe(c, 's2', { id: String(id) });
  await c.until((m) => m.some((x) => x.type === 'next' && x.id === 's2'));
  expect(c.closeCode).toBeUndefined();
  c.ws.close();
});
