/**
 * The SDK's `subscribe('OrderEvents', { id }, handlers)` against the running server: typed
 * from the operation, events in order, and automatic resume: after the server cuts every
 * connection, it reconnects with jittered backoff and `since` = the last seq it delivered,
 * so the writes made while it was away arrive once and nothing twice.
 */
import WebSocket from 'ws';
import { createGraphqlClient, type GraphqlRequestError, type OperationTypes } from '@orderline/sdk';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, touch } from '../support/streams';

type Event = OperationTypes['OrderEventsV2']['result']['orderEvents'];

async function until(cond: () => boolean, what: () => string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('SDK subscribe', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(() => srv.close());

  it('an event with a field error (a total the deprecated totalCents cannot hold) carries its code on the wire and fails the SDK subscription with it; OrderEventsV2 reads it', async () => {
    const big = { items: [{ sku: 'BIG', quantity: 1000, unit_price_cents: 99_999_999 }], currency: 'EUR' };
    const { id } = await createOrder(srv, big);
    // On the wire: graphql-transport-ws `next` with partial data and a coded error.
    const raw = new WebSocket(`${srv.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', { headers: { authorization: `Bearer ${srv.alice.token}` } });
    const messages: { type: string; payload?: { data?: unknown; errors?: { extensions?: { code?: string } }[] } }[] = [];
    raw.on('message', (d) => messages.push(JSON.parse((d as Buffer).toString()) as (typeof messages)[number]));
    await new Promise((r) => raw.once('open', r));
    raw.send(JSON.stringify({ type: 'connection_init' }));
    await until(
      () => messages.some((m) => m.type === 'connection_ack'),
      () => JSON.stringify(messages),
    );
    raw.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: `subscription { orderEvents(id: "${id}", since: 0) { seq order { totalCents } } }` } }));
    await until(
      () => messages.some((m) => m.type === 'next' && m.payload?.errors),
      () => JSON.stringify(messages),
    );
    const next = messages.find((m) => m.type === 'next' && m.payload?.errors);
    expect(next?.payload?.errors?.map((e) => e.extensions?.code)).toEqual(['INTERNAL_SERVER_ERROR']);
    raw.close();

    const client = createGraphqlClient({ baseUrl: srv.url, token: srv.alice.token, WebSocket });
    const errors: GraphqlRequestError[] = [];
    const old = client.subscribe('OrderEvents', { id: String(id), since: 0 }, { next: () => undefined, error: (e) => errors.push(e) });
    await until(
      () => errors.length === 1,
      () => 'no error',
    );
    expect(errors[0].code).toBe('INTERNAL_SERVER_ERROR');
    expect(errors[0].data).toMatchObject({ orderEvents: { seq: 1, order: null } });
    old.close();
    const totals: number[] = [];
    const v2 = client.subscribe('OrderEventsV2', { id: String(id), since: 0 }, { next: (d) => void (d.orderEvents.order && totals.push(d.orderEvents.order.totalCentsSafe)) });
    await until(
      () => totals.length === 1,
      () => 'no event',
    );
    expect(totals).toEqual([99_999_999_000]);
    v2.close();
  });

  it('delivers each event once, resumes with since after a drop (backoff with jitter), and passes no subscribed message on', async () => {
    const { id } = await createOrder(srv);
    const got: Event[] = [];
    const connects: number[] = [];
    const delays: number[] = [];
    const client = createGraphqlClient({ baseUrl: srv.url, token: srv.alice.token, WebSocket, backoff: { baseMs: 20, capMs: 200 }, random: () => (delays.push(1), 0.5) });
    const sub = client.subscribe(
      'OrderEventsV2',
      { id: String(id) },
      {
        next: (data) => got.push(data.orderEvents), // typed: OrderEventsSubscription
        onConnect: (attempt) => connects.push(attempt),
      },
    );
    await until(
      () => sub.lastSeq === 1,
      () => `lastSeq ${sub.lastSeq}`,
    );
    await touch(srv, id, 2);
    await until(
      () => got.length === 2,
      () => JSON.stringify(got),
    );
    srv.realtime.dropConnections(); // cut without a goodbye
    await touch(srv, id, 3); // 4..6 while away (the client is backing off)
    await until(
      () => got.length === 5,
      () => JSON.stringify(got),
    );
    await touch(srv, id, 1);
    await until(
      () => got.length === 6,
      () => JSON.stringify(got),
    );
    expect(got.map((e) => [e.type, e.seq, e.order?.revision])).toEqual([2, 3, 4, 5, 6, 7].map((seq) => ['order.updated', seq, seq]));
    expect(connects).toEqual([0, 1]); // the first connection, then one reconnect
    expect(delays).toHaveLength(1); // that reconnect's delay drew its jitter: it applies to the first reconnect too
    sub.close();
  });

  it('a refused upgrade (503, accept limiter) is retried after its Retry-After, not the shorter backoff, and is not counted as an attempt', async () => {
    // One new connection allowed, and (a frozen clock) no more: the second subscription is refused, Retry-After 1 then 3.
    const limited = await startTestServer({ ACCEPT_RATE: '1', ACCEPT_BURST: '1' }, { now: () => 0 });
    try {
      const { id } = await createOrder(limited);
      const client = createGraphqlClient({ baseUrl: limited.url, token: limited.alice.token, WebSocket, backoff: { baseMs: 20, capMs: 200 }, random: () => 0 });
      const first = client.subscribe('OrderEvents', { id: String(id) }, { next: () => undefined });
      await until(
        () => first.lastSeq === 1,
        () => `lastSeq ${first.lastSeq}`,
      );
      const connects: { attempt: number; at: number }[] = [];
      const refused = client.subscribe('OrderEvents', { id: String(id) }, { next: () => undefined, onConnect: (attempt) => connects.push({ attempt, at: Date.now() }) });
      await until(
        () => connects.length === 2,
        () => JSON.stringify(connects),
      );
      refused.close();
      first.close();
      expect(connects.map((c) => c.attempt)).toEqual([0, 0]);
      // The backoff alone (20 ms) would have come back at once; Retry-After said 1 s.
      expect(connects[1].at - connects[0].at).toBeGreaterThanOrEqual(1000);
    } finally {
      await limited.close();
    }
  });

  it("another account's order stops the subscription with 404 NOT_FOUND; the since given is where it resumes from", async () => {
    const bobs = await createOrder(srv, {}, 'bob');
    const mine = await createOrder(srv);
    await touch(srv, mine.id, 3); // 2..4
    const client = createGraphqlClient({ baseUrl: srv.url, token: srv.alice.token, WebSocket });
    const errors: GraphqlRequestError[] = [];
    const refused = client.subscribe('OrderEvents', { id: String(bobs.id) }, { next: () => undefined, error: (e) => errors.push(e) });
    const got: Event[] = [];
    const resumed = client.subscribe('OrderEventsV2', { id: String(mine.id), since: 2 }, { next: (d) => got.push(d.orderEvents) });
    await until(
      () => errors.length === 1 && got.length === 2,
      () => JSON.stringify({ errors, got }),
    );
    // The status /graphql over HTTP, and streamOrder, answer it with: 404.
    expect(errors[0]).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect(got.map((e) => e.seq)).toEqual([3, 4]);
    refused.close();
    resumed.close();
  });

  it('only subscriptions that resume with since are accepted by name (a type error otherwise)', () => {
    const client = createGraphqlClient({ baseUrl: srv.url, token: srv.alice.token, WebSocket });
    // @ts-expect-error `User` is a query: it has no `since` to resume with
    const typeOnly = () => client.subscribe('User', { id: 'u1' }, { next: () => undefined });
    expect(typeof typeOnly).toBe('function');
  });

  it('a token the server refuses fails the subscription with status 401 and UNAUTHENTICATED, as every transport answers a bad token', async () => {
    const { id } = await createOrder(srv);
    const gql = createGraphqlClient({ baseUrl: srv.url, token: 'bad-token', WebSocket });
    const errors: GraphqlRequestError[] = [];
    const sub = gql.subscribe('OrderEvents', { id: String(id) }, { next: () => undefined, error: (e) => errors.push(e) });
    await until(
      () => errors.length > 0,
      () => 'no error',
    );
    expect(errors[0]).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
    sub.close();
  });
});
