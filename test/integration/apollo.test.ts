/**
 * A real Apollo Client with its persisted-query link against the running server:
 * the first request sends the hash only, the server answers PersistedQueryNotFound,
 * the link retries with the text, and the next request for the same query is hash only
 * again. Over POST, and over GET as Apollo's `useGETForHashedQueries` does it.
 */
import { createHash } from 'node:crypto';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { startTestServer, type TestServer } from '../support/server';

interface Sent {
  method: string;
  hash?: string;
  hasQuery: boolean;
}

function client(srv: TestServer, token: string, sent: Sent[], useGET: boolean) {
  const recordingFetch: typeof fetch = async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const body = typeof init.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : undefined;
    const ext = body?.extensions ?? (url.searchParams.get('extensions') ? JSON.parse(url.searchParams.get('extensions')!) : undefined);
    sent.push({
      method: init.method ?? 'GET',
      hash: (ext as { persistedQuery?: { sha256Hash?: string } } | undefined)?.persistedQuery?.sha256Hash,
      hasQuery: typeof body?.query === 'string' || url.searchParams.has('query'),
    });
    return fetch(input, init);
  };
  const persisted = new PersistedQueryLink({
    sha256: (text: string) => createHash('sha256').update(text).digest('hex'),
    useGETForHashedQueries: useGET,
  });
  const http = new HttpLink({ uri: `${srv.url}/graphql`, fetch: recordingFetch, headers: { authorization: `Bearer ${token}` } });
  return new ApolloClient({ link: persisted.concat(http), cache: new InMemoryCache() });
}

describe('Apollo Client with the persisted-query link', () => {
  let srv: TestServer;
  let token: string;
  beforeAll(async () => {
    srv = await startTestServer();
    await srv.store.seedDemo();
    token = await srv.tokenFor('demo');
  });
  afterAll(() => srv.close());

  it.each([
    ['POST', false, 'u3', 'Chen'],
    ['GET for hashed queries', true, 'u6', 'Fatima'],
  ])('%s: hash first, retry with text, then hash only', async (_name, useGET, id, name) => {
    const sent: Sent[] = [];
    // A query the build-time manifest does not hold, so the server has to learn it.
    const QUERY = gql`
      query ApolloProbe${useGET ? 'Get' : 'Post'}($id: ID!) {
        user(id: $id) {
          id
          name
        }
      }
    `;
    const first = await client(srv, token, sent, useGET).query({ query: QUERY, variables: { id }, fetchPolicy: 'network-only' });
    expect(first.data).toEqual({ user: { __typename: 'User', id, name } });
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatchObject({ hasQuery: false, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(sent[1]).toMatchObject({ hasQuery: true, hash: sent[0].hash, method: 'POST' });
    if (useGET) expect(sent[0].method).toBe('GET');

    // A new client (empty cache), same server: the hash alone is enough now.
    const again: Sent[] = [];
    const second = await client(srv, token, again, useGET).query({ query: QUERY, variables: { id }, fetchPolicy: 'network-only' });
    expect(second.data).toEqual(first.data);
    expect(again).toEqual([{ method: useGET ? 'GET' : 'POST', hash: sent[0].hash, hasQuery: false }]);
  });
});
