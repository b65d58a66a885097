/**
 * GraphQL subscriptions over graphql-transport-ws on /graphql against the running server:
 * `orderEvents` on the realtime hub and ring (live, replay exactly once, resync), the two
 * ways to authenticate, another account's order, the request rules applied to
 * subscription documents (depth, cost, APQ, allowlist), and the connection rules shared
 * with /orders (1013, 1001, the accept limiter). Ring: REPLAY_RATE 1 x REPLAY_WINDOW_S 5 = 5.
 */
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, touch, WsClient } from '../support/streams';
import { connectGraphqlWs, eventsOf, GRAPHQL_WS, nextsOf, openGraphqlWs, ORDER_EVENTS, subscribe } from '../support/graphqlWs';
import { persistedOperations } from '../../generated/graphql/persisted';
import { sha256Hex } from '../../src/graphql';

const RING = { REPLAY_RATE: '1', REPLAY_WINDOW_S: '5' };
const errorsOf = (c: WsClient, id: string) => c.messages.filter((m) => m.type === 'error' && m.id === id).flatMap((m) => m.payload as { message: string; extensions?: { code?: string } }[]);
const seqs = (c: WsClient, id: string) => eventsOf(c, id).map((e) => [e.type, e.seq]);

describe('subscription orderEvents over graphql-transport-ws', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer(RING);
  });
  afterAll(() => srv.close());

  it('without since: subscribed at the revision, then every write live with the selected fields only', async () => {
    const { id } = await createOrder(srv);
    const c = await connectGraphqlWs(srv);
    expect(c.ws.protocol).toBe(GRAPHQL_WS);
    subscribe(c, '1', { id: String(id) });
    await c.until(() => eventsOf(c, '1').length === 1);
    await touch(srv, id, 2);
    await c.until(() => eventsOf(c, '1').length === 3);
    const events = eventsOf(c, '1');
    expect(events[0]).toEqual({ seq: 1, type: 'subscribed', resync: null, order: null });
    expect(events.slice(1)).toEqual([
      { seq: 2, type: 'order.updated', resync: null, order: { id: String(id), status: 'pending', note: expect.any(String), revision: 2 } },
      { seq: 3, type: 'order.updated', resync: null, order: { id: String(id), status: 'pending', note: expect.any(String), revision: 3 } },
    ]);
    expect(nextsOf(c, '1').every((p) => p.errors === undefined)).toBe(true);
    // complete: nothing more for this id, and the topic is released
    c.send({ id: '1', type: 'complete' });
    await c.until(() => srv.realtime.stats().topics === 0);
    c.ws.close();
  });

  it('an id used again after complete (subscribe, complete, subscribe at once, generated counts): one subscription, each event once; none outlives the connection', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 30 }), async (pairs) => {
        const { id } = await createOrder(srv);
        const c = await connectGraphqlWs(srv);
        const payload = { query: ORDER_EVENTS, variables: { id: String(id) } };
        // All in one burst: each subscribe is still starting when its complete arrives.
        for (let i = 0; i < pairs; i++) {
          c.send({ id: 'r', type: 'subscribe', payload });
          c.send({ id: 'r', type: 'complete' });
        }
        c.send({ id: 'r', type: 'subscribe', payload });
        // The last subscribe is live: its `subscribed`, then one event per write.
        await c.until(() => eventsOf(c, 'r').some((e) => e.type === 'subscribed') && c.messages.length > 0);
        await touch(srv, id, 2);
        await c.until(() => eventsOf(c, 'r').filter((e) => e.type === 'order.updated').length >= 2);
        await touch(srv, id, 1); // a marker: everything before it has arrived once it has
        await c.until(() => eventsOf(c, 'r').some((e) => e.seq === 4));
        const updates = eventsOf(c, 'r')
          .filter((e) => e.type === 'order.updated')
          .map((e) => e.seq);
        expect(updates).toEqual([2, 3, 4]);
        expect(c.messages.filter((m) => m.type === 'complete' || m.type === 'error')).toEqual([]);
        c.ws.close();
        await c.until(() => srv.realtime.stats().topics === 0);
      }),
      { numRuns: 5 },
    );
  });

  it('a message only the server sends (next, error, connection_ack) closes 4400, not 4500', async () => {
    for (const msg of [{ id: '1', type: 'next', payload: {} }, { type: 'connection_ack' }, { id: '1', type: 'error', payload: [] }]) {
      const c = await connectGraphqlWs(srv);
      c.send(msg);
      expect(await c.closed()).toBe(4400);
    }
  });

  it('since replays the missed events exactly once, then live', async () => {
    const { id } = await createOrder(srv);
    await touch(srv, id, 3); // seqs 2..4
    const c = await connectGraphqlWs(srv);
    subscribe(c, 'a', { id: String(id), since: 2 });
    await c.until(() => eventsOf(c, 'a').length === 3);
    await touch(srv, id, 1); // 5, live
    await c.until(() => eventsOf(c, 'a').length === 4);
    expect(seqs(c, 'a')).toEqual([
      ['subscribed', 2],
      ['order.updated', 3],
      ['order.updated', 4],
      ['order.updated', 5],
    ]);
    c.ws.close();
  });

  it('since older than the ring: one resync (the position to continue from), then live; since 0 replays from seq 1; since ahead resyncs', async () => {
    const old = await createOrder(srv);
    await touch(srv, old.id, 8); // 2..9; the ring holds 5..9
    const fresh = await createOrder(srv);
    await touch(srv, fresh.id, 1); // 1..2
    const c = await connectGraphqlWs(srv);
    subscribe(c, 'old', { id: String(old.id), since: 2 });
    subscribe(c, 'zero', { id: String(fresh.id), since: 0 });
    subscribe(c, 'ahead', { id: String(fresh.id), since: 7 });
    await c.until(() => eventsOf(c, 'old').length === 2 && eventsOf(c, 'zero').length === 3 && eventsOf(c, 'ahead').length === 2);
    await touch(srv, old.id, 1);
    await c.until(() => eventsOf(c, 'old').length === 3);
    expect(eventsOf(c, 'old')).toEqual([
      { seq: 2, type: 'subscribed', resync: null, order: null },
      { seq: 9, type: 'resync', resync: 'gap_too_old', order: null },
      expect.objectContaining({ seq: 10, type: 'order.updated' }),
    ]);
    expect(seqs(c, 'zero')).toEqual([
      ['subscribed', 0],
      ['order.created', 1],
      ['order.updated', 2],
    ]);
    expect(eventsOf(c, 'ahead')[1]).toEqual({ seq: 2, type: 'resync', resync: 'since_ahead', order: null });
    c.ws.close();
  });

  it('subscribers with different selections (aliases, fewer fields) each get their own shape of the same event', async () => {
    const { id } = await createOrder(srv);
    const c = await connectGraphqlWs(srv);
    subscribe(c, 'full', { id: String(id) });
    subscribe(c, 'small', { id: String(id) }, 'subscription Small($id: ID!) { e: orderEvents(id: $id) { position: seq order { state: status } } }');
    await c.until(() => eventsOf(c, 'full').length === 1 && nextsOf(c, 'small').length === 1);
    await touch(srv, id, 1);
    await c.until(() => eventsOf(c, 'full').length === 2 && nextsOf(c, 'small').length === 2);
    expect(nextsOf(c, 'small').map((p) => p.data)).toEqual([{ e: { position: 1, order: null } }, { e: { position: 2, order: { state: 'pending' } } }]);
    expect(eventsOf(c, 'full')[1]).toMatchObject({ seq: 2, order: { revision: 2 } });
    c.ws.close();
  });

  it("another account's order, or an id that names none, looks missing: an error message with NOT_FOUND; the socket stays open", async () => {
    const bobs = await createOrder(srv, {}, 'bob');
    const mine = await createOrder(srv);
    const counted = async (outcome: string) => Number(new RegExp(`^orderline_graphql_requests_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(await srv.metrics.registry.metrics())?.[1] ?? 0);
    const [notFound, ok] = [await counted('NOT_FOUND'), await counted('ok')];
    const c = await connectGraphqlWs(srv);
    subscribe(c, 'x', { id: String(bobs.id) });
    subscribe(c, 'y', { id: 'nope' });
    subscribe(c, 'z', { id: '999999999' });
    await c.until(() => ['x', 'y', 'z'].every((id) => errorsOf(c, id).length > 0));
    for (const id of ['x', 'y', 'z']) expect(errorsOf(c, id)).toEqual([expect.objectContaining({ message: 'No such order', extensions: { code: 'NOT_FOUND' } })]);
    expect(nextsOf(c, 'x')).toEqual([]);
    subscribe(c, 'ok', { id: String(mine.id) });
    await c.until(() => eventsOf(c, 'ok').length === 1);
    // Each subscribe counted once, with what its client got (the metric of every /graphql request).
    expect([(await counted('NOT_FOUND')) - notFound, (await counted('ok')) - ok]).toEqual([3, 1]);
    expect(c.closeCode).toBeUndefined();
    c.ws.close();
  });

  it('a negative since or variables that do not coerce: an error message with a code', async () => {
    const { id } = await createOrder(srv);
    const c = await connectGraphqlWs(srv);
    subscribe(c, 'neg', { id: String(id), since: -1 });
    subscribe(c, 'bad', { id: String(id), since: 'soon' });
    await c.until(() => errorsOf(c, 'neg').length > 0 && errorsOf(c, 'bad').length > 0);
    expect(errorsOf(c, 'neg')[0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(errorsOf(c, 'bad')[0].extensions?.code).toBe('BAD_USER_INPUT');
    c.ws.close();
  });

  it('the request rules apply to subscription documents: depth and cost (priced per event) refused with GRAPHQL_VALIDATION_FAILED, unknown fields too; queries go to HTTP', async () => {
    const { id } = await createOrder(srv);
    const c = await connectGraphqlWs(srv);
    // Five list levels of 10 items x (2 + 3 fields): far above 1000 points per event, and deeper than 4.
    subscribe(c, 'nested', { id: String(id) }, `subscription { orderEvents(id: "${id}") { order { items { sku quantity unitPriceCents } } } }`);
    const costly = `subscription { orderEvents(id: "${id}") { ${Array.from({ length: 120 }, (_, i) => `o${i}: order { items { sku quantity } }`).join(' ')} } }`;
    subscribe(c, 'costly', {}, costly);
    subscribe(c, 'unknown', { id: String(id) }, 'subscription ($id: ID!) { orderEvents(id: $id) { nope } }');
    subscribe(c, 'query', {}, '{ viewer { id } }');
    subscribe(c, 'parse', {}, 'subscription {');
    await c.until(() => ['costly', 'unknown', 'query', 'parse'].every((x) => errorsOf(c, x).length > 0) && nextsOf(c, 'nested').length === 1);
    expect(errorsOf(c, 'costly')[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(errorsOf(c, 'unknown')[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(errorsOf(c, 'query')[0].extensions?.code).toBe('BAD_REQUEST');
    expect(errorsOf(c, 'parse')[0].extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    c.ws.close();
  });

  it('@skip or @include at the top level (literal or variable) is an error message with GRAPHQL_VALIDATION_FAILED; the socket and its other subscriptions go on', async () => {
    const { id } = await createOrder(srv);
    const c = await connectGraphqlWs(srv);
    subscribe(c, 'live', { id: String(id) });
    await c.until(() => eventsOf(c, 'live').length === 1);
    subscribe(c, 'skip', {}, `subscription { orderEvents(id: "${id}") @skip(if: true) { seq } }`);
    subscribe(c, 'include', { c: true }, `subscription ($c: Boolean!) { ...F } fragment F on Subscription { orderEvents(id: "${id}") @include(if: $c) { seq } }`);
    await c.until(() => errorsOf(c, 'skip').length > 0 && errorsOf(c, 'include').length > 0);
    for (const x of ['skip', 'include'])
      expect(errorsOf(c, x)).toEqual([expect.objectContaining({ message: expect.stringMatching(/must not use `@skip` or `@include`/), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })]);
    await touch(srv, id, 1);
    await c.until(() => eventsOf(c, 'live').length === 2);
    expect(c.closeCode).toBeUndefined();
    c.ws.close();
  });

  it('depth: a subscription nesting deeper than the limit is refused before it starts', async () => {
    const srv2 = await startTestServer({ GRAPHQL_MAX_DEPTH: '2' });
    try {
      const { id } = await createOrder(srv2);
      const c = await connectGraphqlWs(srv2);
      subscribe(c, 'deep', { id: String(id) }, 'subscription ($id: ID!) { orderEvents(id: $id) { order { items { sku } } } }');
      subscribe(c, 'flat', { id: String(id) }, 'subscription ($id: ID!) { orderEvents(id: $id) { seq order { id } } }');
      await c.until(() => errorsOf(c, 'deep').length > 0 && nextsOf(c, 'flat').length === 1);
      expect(errorsOf(c, 'deep')[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      c.ws.close();
    } finally {
      await srv2.close();
    }
  });

  it('a subscribe message is bounded by BODY_LIMIT_BYTES, as a POST body is: over it closes 1009, under it subscribes', async () => {
    const srv2 = await startTestServer({ BODY_LIMIT_BYTES: '16384' });
    try {
      const { id } = await createOrder(srv2);
      const padded = (bytes: number) => `${ORDER_EVENTS}\n#${'x'.repeat(bytes)}`; // a comment: the same operation, longer text
      const fits = await connectGraphqlWs(srv2);
      subscribe(fits, 'fits', { id: String(id) }, padded(12_000));
      await fits.until(() => eventsOf(fits, 'fits').length === 1);
      fits.ws.close();
      const over = await connectGraphqlWs(srv2);
      subscribe(over, 'over', { id: String(id) }, padded(20_000));
      await over.until(() => over.closeCode !== undefined);
      expect(over.closeCode).toBe(1009);
      const post = await srv2.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `{ viewer { name } }\n#${'x'.repeat(20_000)}` }) });
      expect(post.status).toBe(413);
    } finally {
      await srv2.close();
    }
  });

  it('APQ: an unknown hash alone is PERSISTED_QUERY_NOT_FOUND; the text with its hash registers it; then the hash alone subscribes', async () => {
    const { id } = await createOrder(srv);
    const text = ORDER_EVENTS.replace('OrderEvents', 'ApqProbe');
    const hash = sha256Hex(text);
    const pq = { extensions: { persistedQuery: { version: 1, sha256Hash: hash } } };
    const c = await connectGraphqlWs(srv);
    subscribe(c, 'miss', { id: String(id) }, '', pq);
    await c.until(() => errorsOf(c, 'miss').length > 0);
    expect(errorsOf(c, 'miss')[0].extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    subscribe(c, 'register', { id: String(id) }, text, pq);
    subscribe(c, 'mismatch', { id: String(id) }, text.replace('seq', 'seq\n'), pq);
    await c.until(() => eventsOf(c, 'register').length === 1 && errorsOf(c, 'mismatch').length > 0);
    expect(errorsOf(c, 'mismatch')[0].extensions?.code).toBe('PERSISTED_QUERY_HASH_MISMATCH');
    subscribe(c, 'hit', { id: String(id) }, '', pq);
    await c.until(() => eventsOf(c, 'hit').length === 1);
    c.ws.close();
  });

  it('a subscription over HTTP is a 400 with a code, not an execution', async () => {
    const { id } = await createOrder(srv);
    const res = await srv.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: ORDER_EVENTS, variables: { id: String(id) } }) });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
  });
});

describe('allowlist mode', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({ GRAPHQL_PERSISTED: 'allowlist' });
  });
  afterAll(() => srv.close());

  it("the contract's OrderEvents runs by hash alone or by its text; any other subscription is PERSISTED_QUERY_NOT_ALLOWED", async () => {
    const { id } = await createOrder(srv);
    const op = persistedOperations.OrderEvents;
    const c = await connectGraphqlWs(srv);
    subscribe(c, 'hash', { id: String(id) }, '', { operationName: 'OrderEvents', extensions: { persistedQuery: { version: 1, sha256Hash: op.hash } } });
    subscribe(c, 'text', { id: String(id) }, op.text);
    subscribe(c, 'other', { id: String(id) }, ORDER_EVENTS);
    await c.until(() => nextsOf(c, 'hash').length === 1 && nextsOf(c, 'text').length === 1 && errorsOf(c, 'other').length > 0);
    expect(errorsOf(c, 'other')[0].extensions?.code).toBe('PERSISTED_QUERY_NOT_ALLOWED');
    expect(nextsOf(c, 'hash')[0].data?.orderEvents).toMatchObject({ type: 'subscribed', seq: 1 });
    c.ws.close();
  });
});

describe('authentication', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(() => srv.close());

  it('by the upgrade header, or by the connection_init payload (authorization or access_token); none, a bad one or both closes 4403', async () => {
    const { id } = await createOrder(srv);
    const viaInit = await connectGraphqlWs(srv, { headerToken: null, init: { authorization: `Bearer ${srv.alice.token}` } });
    const viaAccessToken = await connectGraphqlWs(srv, { headerToken: null, init: { access_token: srv.alice.token } });
    for (const c of [viaInit, viaAccessToken]) {
      subscribe(c, '1', { id: String(id) });
      await c.until(() => eventsOf(c, '1').length === 1);
      c.ws.close();
    }
    const both = { authorization: `Bearer ${srv.alice.token}`, access_token: srv.alice.token }; // one token, sent twice (RFC 6750 3.1)
    for (const init of [undefined, { authorization: 'Bearer nope' }, { access_token: 42 }, both]) {
      const c = await openGraphqlWs(srv, { headerToken: null });
      if (!(c instanceof WsClient)) throw new Error('refused');
      c.send({ type: 'connection_init', ...(init ? { payload: init } : {}) });
      expect(await c.closed()).toBe(4403);
      expect(c.messages).toEqual([]);
    }
  });

  it("a token in connection_init is checked even after the upgrade carried one: a bad one or another account's closes 4403", async () => {
    for (const [init, want] of [
      [`Bearer ${srv.alice.token}`, 'ack'],
      ['Bearer bad', 4403],
      [`Bearer ${srv.bob.token}`, 4403],
    ] as const) {
      const c = await openGraphqlWs(srv, { headerToken: srv.alice.token });
      if (!(c instanceof WsClient)) throw new Error('refused');
      c.send({ type: 'connection_init', payload: { authorization: init } });
      if (want === 'ack') {
        await c.until((m) => m.some((x) => x.type === 'connection_ack'));
        c.ws.close();
      } else expect(await c.closed()).toBe(want);
    }
  });

  it("bob's token sees alice's order as missing", async () => {
    const { id } = await createOrder(srv);
    const c = await connectGraphqlWs(srv, { headerToken: srv.bob.token });
    subscribe(c, '1', { id: String(id) });
    await c.until(() => errorsOf(c, '1').length > 0);
    expect(errorsOf(c, '1')[0].extensions?.code).toBe('NOT_FOUND');
    c.ws.close();
  });

  it('a bad upgrade token is refused with 401 problem+json; a subscribe before connection_init closes 4401', async () => {
    expect(await openGraphqlWs(srv, { headerToken: 'bad' })).toMatchObject({ status: 401, headers: { 'content-type': 'application/problem+json', 'www-authenticate': expect.stringMatching(/^Bearer/) } });
    const c = await openGraphqlWs(srv, { headerToken: null });
    if (!(c instanceof WsClient)) throw new Error('refused');
    subscribe(c, '1', { id: '1' });
    expect(await c.closed()).toBe(4401);
  });

  it('a frame the JSON reader refuses (too deep, a repeated member, an unpaired surrogate) closes 4400 with the reason (generated)', async () => {
    const bad = fc.oneof(
      fc.integer({ min: 65, max: 8000 }).map((n) => `{"id":"d","type":"subscribe","payload":{"query":"subscription { orderEvents(id: \\"1\\") { seq } }","variables":{"x":${'['.repeat(n)}${']'.repeat(n)}}}}`),
      fc.constantFrom('id', 'type', 'payload').map((k) => `{"id":"a","type":"subscribe","payload":{"query":"subscription { orderEvents(id: \\"1\\") { seq } }"},"${k}":"b"}`),
      fc.constant('{"id":"v","type":"subscribe","payload":{"query":"subscription($id: ID!) { orderEvents(id: $id) { seq } }","variables":{"id":"999","id":"1"}}}'),
      fc.constant('{"id":"s","type":"subscribe","payload":{"query":"subscription { orderEvents(id: \\"1\\") { seq } }","variables":{"x":"\\ud800"}}}'),
    );
    await fc.assert(
      fc.asyncProperty(bad, async (frame) => {
        const c = await connectGraphqlWs(srv);
        let reason = '';
        c.ws.on('close', (_code: number, r: Buffer) => (reason = r.toString()));
        c.send(frame);
        expect(await c.closed()).toBe(4400);
        expect(reason).toMatch(/^The message /);
      }),
      { numRuns: 15 },
    );
  });

  it('a binary frame closes 4400 naming the frame type, whatever its bytes (valid JSON too) (generated)', async () => {
    const bytes = fc.oneof(fc.constant('{"type":"ping"}'), fc.constant('{"id":"1","type":"complete"}'), fc.string({ maxLength: 40 }));
    await fc.assert(
      fc.asyncProperty(bytes, async (text) => {
        const c = await connectGraphqlWs(srv);
        let reason = '';
        c.ws.on('close', (_code: number, r: Buffer) => (reason = r.toString()));
        c.ws.send(Buffer.from(text), { binary: true });
        expect(await c.closed()).toBe(4400);
        expect(reason).toBe('Messages are JSON text frames, not binary frames');
      }),
      { numRuns: 8 },
    );
  });

  it('a client offering no graphql-transport-ws subprotocol is closed 4406', async () => {
    const c = await openGraphqlWs(srv, { protocols: [] });
    if (!(c instanceof WsClient)) throw new Error('refused');
    expect(await c.closed()).toBe(4406);
  });
});

describe('connection rules shared with /orders', () => {
  it('a stalled subscriber is closed 1013 "Try again later" once its queue is over MAX_BUFFER_BYTES', async () => {
    const now = 0;
    // The ceiling raised for this wide subscription: 30 orders of 100 items cost 9060.
    const srv = await startTestServer({ MAX_BUFFER_BYTES: '65536', GRAPHQL_MAX_COST: '10000' }, { now: () => now });
    let c: WsClient | undefined;
    try {
      const items = Array.from({ length: 100 }, (_, i) => ({ sku: `SKU-${i}-${'x'.repeat(54)}`, quantity: 1, unit_price_cents: 1 }));
      const { id } = await createOrder(srv, { items });
      const client = (c = await connectGraphqlWs(srv));
      // 30 aliases of the order's items: each event is ~200 KB on the wire, so few writes fill the kernel's buffers.
      const wide = Array.from({ length: 30 }, (_, i) => `o${i}: order { items { sku } }`).join(' ');
      subscribe(client, '1', { id: String(id) }, `subscription ($id: ID!) { orderEvents(id: $id) { seq ${wide} } }`);
      await client.until(() => nextsOf(client, '1').length === 1);
      const socket = (client.ws as unknown as { _socket: import('node:net').Socket })._socket;
      socket.pause();
      const closes = async () => Number(/orderline_stream_backpressure_closes_total (\d+)/.exec(await srv.scrape())?.[1]);
      for (let i = 0; i < 200 && (await closes()) < 1; i++) await Promise.all([1, 2, 3, 4].map(() => touch(srv, id, 5)));
      expect(await closes()).toBe(1);
      expect(srv.realtime.stats().topics).toBe(0);
      socket.resume();
      expect(await client.closed(60_000)).toBe(1013);
      expect(client.closeReason).toBe('Try again later');
    } finally {
      c?.ws.terminate(); // a stalled client would hold the server's close
      await srv.close();
    }
  }, 180_000);

  it('over ACCEPT_BURST: the /graphql upgrade gets 503 with Retry-After, like /orders', async () => {
    const now = 0;
    const srv = await startTestServer({ ACCEPT_RATE: '1', ACCEPT_BURST: '1' }, { now: () => now });
    try {
      const first = await connectGraphqlWs(srv);
      expect(await openGraphqlWs(srv)).toMatchObject({ status: 503, headers: { 'retry-after': expect.any(String), 'content-type': 'application/problem+json' } });
      first.ws.close();
    } finally {
      await srv.close();
    }
  });

  it('shutdown closes subscription sockets with 1001', async () => {
    const srv = await startTestServer();
    try {
      const { id } = await createOrder(srv);
      const c = await connectGraphqlWs(srv);
      subscribe(c, '1', { id: String(id) });
      await c.until(() => eventsOf(c, '1').length === 1);
      srv.realtime.close();
      expect(await c.closed()).toBe(1001);
    } finally {
      await srv.close();
    }
  });
});
