/** The SDK's typed GraphQL client against the running server: hash first, text only when asked. */
import { parse } from 'graphql';
import { createGraphqlClient, GraphqlRequestError, type TypedDocumentNode } from '@orderline/sdk';
import { persistedOperations } from '../../generated/graphql/persisted';
import { startTestServer, type TestServer } from '../support/server';

type Sent = { method: string; hasQuery: boolean; hash?: string };

function recording(sent: Sent[]): typeof fetch {
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const body = typeof init.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : {};
    const ext = (body.extensions ?? JSON.parse(url.searchParams.get('extensions') ?? '{}')) as { persistedQuery?: { sha256Hash: string } };
    sent.push({ method: init.method ?? 'GET', hasQuery: 'query' in body || url.searchParams.has('query'), hash: ext.persistedQuery?.sha256Hash });
    return fetch(input, init);
  };
}

async function withServer(env: Record<string, string>, deps: Parameters<typeof startTestServer>[1], fn: (srv: TestServer, token: string) => Promise<void>) {
  const srv = await startTestServer(env, deps);
  try {
    await srv.store.seedDemo();
    await fn(srv, await srv.tokenFor('demo'));
  } finally {
    await srv.close();
  }
}

describe('SDK GraphQL client', () => {
  it('sends the manifest hash only, and gets typed data in one round trip', () =>
    withServer({}, {}, async (srv, token) => {
      const sent: Sent[] = [];
      const gql = createGraphqlClient({ baseUrl: srv.url, token, fetch: recording(sent) });
      const data = await gql.query('FriendsOfFriends', { id: 'u1', first: 2 });
      expect(data.user?.friends).toHaveLength(2);
      expect(data.user?.friends[0].friends).toHaveLength(2);
      expect(sent).toEqual([{ method: 'POST', hasQuery: false, hash: persistedOperations.FriendsOfFriends.hash }]);
    }));

  it('retries once with the text when the server does not know the hash, then hash only again', () =>
    withServer({}, { manifest: {} }, async (srv, token) => {
      const sent: Sent[] = [];
      const gql = createGraphqlClient({ baseUrl: srv.url, token, fetch: recording(sent), useGetForHashes: true });
      const first = await gql.query('User', { id: 'u2' });
      expect(first).toEqual({ user: { id: 'u2', name: 'Brian' } });
      expect(sent.map((s) => [s.method, s.hasQuery])).toEqual([
        ['GET', false],
        ['POST', true],
      ]);
      await gql.query('User', { id: 'u3' });
      expect(sent.slice(2).map((s) => [s.method, s.hasQuery])).toEqual([['GET', false]]);
    }));

  it('works against an allowlist server and surfaces rejections as GraphqlRequestError with the code', () =>
    withServer({ GRAPHQL_PERSISTED: 'allowlist' }, {}, async (srv, token) => {
      const gql = createGraphqlClient({ baseUrl: srv.url, token });
      expect((await gql.query('ViewerOrders', { first: 1 })).viewer?.orders).toHaveLength(1);
      const err = await gql.query('FriendsOfFriends', { id: 'u1', first: 100 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GraphqlRequestError);
      expect((err as GraphqlRequestError).code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect((err as GraphqlRequestError).status).toBe(400);
    }));

  it('the V2 operations read any total REST accepts (totalCentsSafe); the released ones, which read totalCents, get a field error', () =>
    withServer({ GRAPHQL_PERSISTED: 'allowlist' }, {}, async (srv, token) => {
      const created = await fetch(`${srv.url}/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ items: [{ sku: 'BIG-1', quantity: 1000, unit_price_cents: 99_999_999 }], currency: 'EUR' }),
      });
      const id = String(((await created.json()) as { id: number }).id);
      const gql = createGraphqlClient({ baseUrl: srv.url, token });
      expect((await gql.query('OrderV2', { id })).order?.totalCentsSafe).toBe(99_999_999_000);
      const mine = (await gql.query('ViewerOrdersV2', { first: 100 })).viewer?.orders.find((o) => o.id === id);
      expect(mine?.totalCentsSafe).toBe(99_999_999_000);
      const old = await gql.query('Order', { id }).catch((e: unknown) => e);
      expect(old).toBeInstanceOf(GraphqlRequestError);
      expect((old as GraphqlRequestError).errors.map((e) => e.extensions?.code)).toEqual(['INTERNAL_SERVER_ERROR']);
    }));

  it('runs a client-defined TypedDocumentNode: its hash first, the printed text once on NOT_FOUND, then hash only', () =>
    withServer({}, {}, async (srv, token) => {
      const sent: Sent[] = [];
      const gql = createGraphqlClient({ baseUrl: srv.url, token, fetch: recording(sent) });
      const doc: TypedDocumentNode<{ user: { name: string } | null }, { id: string }> = parse('query Mine($id: ID!) { user(id: $id) { name } }');
      expect(await gql.execute(doc, { id: 'u2' })).toEqual({ user: { name: 'Brian' } });
      expect(await gql.execute(doc, { id: 'u3' })).toEqual({ user: { name: expect.any(String) } });
      expect(sent.map((s) => s.hasQuery)).toEqual([false, true, false]);
      expect(new Set(sent.map((s) => s.hash)).size).toBe(1);
    }));

  it("hashes a client's document as the allowlist does: a contract operation written differently is allowed, anything else refused", () =>
    withServer({ GRAPHQL_PERSISTED: 'allowlist' }, {}, async (srv, token) => {
      const sent: Sent[] = [];
      const gql = createGraphqlClient({ baseUrl: srv.url, token, fetch: recording(sent) });
      // contracts/operations/User.graphql, re-spaced and on one line: print() makes it the same text, so the same hash.
      const sameAsContract: TypedDocumentNode<{ user: { id: string; name: string } | null }, { id: string }> = parse('query User($id:ID!){user(id:$id){id name}}');
      expect(await gql.execute(sameAsContract, { id: 'u2' })).toEqual({ user: { id: 'u2', name: 'Brian' } });
      expect(sent).toEqual([{ method: 'POST', hasQuery: false, hash: persistedOperations.User.hash }]);
      const other = await gql.execute(parse('query Other { user(id: "u2") { name } }'), {}).catch((e: unknown) => e);
      expect(other).toBeInstanceOf(GraphqlRequestError);
      expect((other as GraphqlRequestError).code).toBe('PERSISTED_QUERY_NOT_ALLOWED');
    }));
});
