/**
 * Outside in: the GraphQL clients teams use, unchanged, over graphql-ws's own client
 * (`createClient`, graphql-transport-ws) against the running server. Apollo Client 4 with
 * `GraphQLWsLink` and urql with `subscriptionExchange` each receive the events of a PATCH;
 * a client cut and subscribed again with `since` (the last `seq` it saw) gets the missed
 * events exactly once.
 */
import WebSocket from 'ws';
import { createClient, type Client as WsGraphqlClient } from 'graphql-ws';
import { ApolloClient, InMemoryCache, gql } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { generatePersistedQueryIdsFromManifest } from '@apollo/persisted-query-lists';
import manifestJson from '../../generated/graphql/persisted-query-manifest.json';
import { persistedOperations } from '../../generated/graphql/persisted';
import { Client as UrqlClient, subscriptionExchange } from '@urql/core';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, touch } from '../support/streams';
import { ORDER_EVENTS, type OrderEventData } from '../support/graphqlWs';

// Apollo's GraphQLWsLink reads the global WebSocket when it sorts an error out (browsers and
// Node 22 have one; Node 20 has not): the platform's WebSocket, as a Node 20 app would provide it.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

function wsClient(srv: TestServer): WsGraphqlClient {
  return createClient({
    url: `${srv.url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    // Browsers cannot set headers on a WebSocket: the token travels in connection_init.
    connectionParams: { authorization: `Bearer ${srv.alice.token}` },
    retryAttempts: 0,
  });
}

async function until(cond: () => boolean, what: () => string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The `extensions.code`s of a client's error: Apollo 4's CombinedGraphQLErrors (`errors`), urql's CombinedError (`graphQLErrors`). */
function codesOf(error: unknown): unknown[] {
  const e = error as { errors?: { extensions?: { code?: unknown } }[]; graphQLErrors?: { extensions?: { code?: unknown } }[] };
  return (e.errors ?? e.graphQLErrors ?? []).map((x) => x.extensions?.code);
}

const brief = (events: OrderEventData[]) => events.map((e) => [e.type, e.seq, e.order?.note ?? null]);

interface Subscriber {
  events: OrderEventData[];
  errors: unknown[];
  stop(): void;
}

/** A subscription through Apollo Client 4 and GraphQLWsLink. */
function apollo(ws: WsGraphqlClient, id: number, since?: number): Subscriber {
  const client = new ApolloClient({ link: new GraphQLWsLink(ws), cache: new InMemoryCache() });
  const out: Subscriber = { events: [], errors: [], stop: () => undefined };
  const sub = client.subscribe<{ orderEvents: OrderEventData }>({ query: gql(ORDER_EVENTS), variables: { id: String(id), since } }).subscribe({
    next: (r) => {
      if (r.data) out.events.push(r.data.orderEvents);
      if (r.error) out.errors.push(r.error);
    },
    error: (e: unknown) => out.errors.push(e),
  });
  out.stop = () => sub.unsubscribe();
  return out;
}

/** A subscription through urql's subscriptionExchange (graphql-ws's recipe from urql's docs). */
function urql(ws: WsGraphqlClient, srv: TestServer, id: number, since?: number): Subscriber {
  const client = new UrqlClient({
    url: `${srv.url}/graphql`,
    exchanges: [
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query || '' };
          return { subscribe: (sink) => ({ unsubscribe: ws.subscribe(input, sink) }) };
        },
      }),
    ],
  });
  const out: Subscriber = { events: [], errors: [], stop: () => undefined };
  const sub = client.subscription<{ orderEvents: OrderEventData }>(ORDER_EVENTS, { id: String(id), since }).subscribe((r) => {
    if (r.data) out.events.push(r.data.orderEvents);
    if (r.error) out.errors.push(r.error);
  });
  out.stop = () => sub.unsubscribe();
  return out;
}

describe.each([
  ['Apollo Client 4 (GraphQLWsLink)', (ws: WsGraphqlClient, _srv: TestServer, id: number, since?: number) => apollo(ws, id, since)],
  ['urql (subscriptionExchange)', (ws: WsGraphqlClient, srv: TestServer, id: number, since?: number) => urql(ws, srv, id, since)],
])('%s over graphql-ws', (_name, subscribeWith) => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(() => srv.close());

  it("receives a PATCH's event; cut and subscribed again with since, it gets what it missed exactly once, then live", async () => {
    const { id } = await createOrder(srv);
    const first = wsClient(srv);
    const a = subscribeWith(first, srv, id);
    await until(
      () => a.events.length === 1,
      () => JSON.stringify(a),
    );
    const patched = await srv.fetch(`/orders/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json', 'if-match': '*' }, body: JSON.stringify({ note: 'hello' }) });
    expect(patched.status).toBe(200);
    await until(
      () => a.events.length === 2,
      () => JSON.stringify(a),
    );
    expect(brief(a.events)).toEqual([
      ['subscribed', 1, null],
      ['order.updated', 2, 'hello'],
    ]);
    // The cut: the socket goes away without a goodbye; writes happen meanwhile.
    await first.dispose();
    a.stop();
    await touch(srv, id, 2); // 3, 4
    const last = a.events.at(-1)!.seq;
    const second = wsClient(srv);
    const b = subscribeWith(second, srv, id, last);
    await until(
      () => b.events.length === 3,
      () => JSON.stringify(b),
    );
    await touch(srv, id, 1); // 5, live
    await until(
      () => b.events.length === 4,
      () => JSON.stringify(b),
    );
    expect(b.events.map((e) => [e.type, e.seq])).toEqual([
      ['subscribed', 2],
      ['order.updated', 3],
      ['order.updated', 4],
      ['order.updated', 5],
    ]);
    expect([...a.errors, ...b.errors]).toEqual([]);
    b.stop();
    await second.dispose();
  });

  it("another account's order: the client gets an error with extensions.code NOT_FOUND and no data", async () => {
    const { id } = await createOrder(srv, {}, 'bob');
    const ws = wsClient(srv);
    const s = subscribeWith(ws, srv, id);
    await until(
      () => s.errors.length > 0,
      () => JSON.stringify(s),
    );
    expect(s.events).toEqual([]);
    expect(s.errors.flatMap(codesOf)).toEqual(['NOT_FOUND']);
    s.stop();
    await ws.dispose();
  });
});

describe.each(['allowlist', 'apq'])('Apollo Client 4 on a server in %s mode, set up as the README says (persisted-query link by manifest, GraphQLWsLink)', (mode) => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({ GRAPHQL_PERSISTED: mode });
  });
  afterAll(() => srv.close());

  it("subscribes to the contract's OrderEvents: the link sends the manifest id with the text its cache added __typename to", async () => {
    const { id } = await createOrder(srv);
    const ws = wsClient(srv);
    const pq = new PersistedQueryLink({ ...generatePersistedQueryIdsFromManifest({ loadManifest: () => Promise.resolve(manifestJson) }) });
    const client = new ApolloClient({ link: pq.concat(new GraphQLWsLink(ws)), cache: new InMemoryCache() });
    const out: Subscriber = { events: [], errors: [], stop: () => undefined };
    const sub = client.subscribe<{ orderEvents: OrderEventData }>({ query: gql(persistedOperations.OrderEvents.text), variables: { id: String(id) } }).subscribe({
      next: (r) => {
        if (r.data) out.events.push(r.data.orderEvents);
        if (r.error) out.errors.push(r.error);
      },
      error: (e: unknown) => out.errors.push(e),
    });
    await until(
      () => out.events.length === 1 || out.errors.length > 0,
      () => JSON.stringify(out),
    );
    expect(out.errors.flatMap(codesOf)).toEqual([]);
    expect(out.events.map((e) => [e.type, e.seq])).toEqual([['subscribed', 1]]);
    sub.unsubscribe();
    await ws.dispose();
  });
});
