/**
 * MAX_STREAMS_PER_ACCOUNT: an account's SSE streams and WebSocket connections (/orders,
 * /graphql) share one cap per process; over it a stream is refused 429 with Retry-After
 * (a GraphQL connection that authenticates in band: close 1008), other accounts are not
 * touched, and a place comes back when one of the account's streams ends.
 */
import { WebSocket } from 'ws';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, openSse, openWs, WsClient } from '../support/streams';
import { GRAPHQL_WS, openGraphqlWs } from '../support/graphqlWs';

let srv: TestServer;
beforeEach(async () => {
  srv = await startTestServer({ MAX_STREAMS_PER_ACCOUNT: '3' });
});
afterEach(() => srv.close());

/** Retries `open` until it is admitted: the server hears of a closed stream a moment after the client closes it. */
async function eventually<T>(open: () => Promise<T>, admitted: (t: T) => boolean): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const t = await open();
    if (admitted(t)) return t;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('never admitted');
}

describe('HEAD of a stream', () => {
  it('answers what a GET would get without spending the accept limiter', async () => {
    const limited = await startTestServer({ ACCEPT_RATE: '1', ACCEPT_BURST: '1' });
    try {
      const { id } = await createOrder(limited);
      const head = () => limited.fetch(`/api/orders/${id}/stream`, { method: 'HEAD', headers: { accept: 'text/event-stream' } });
      // One admission in the bucket: HEADs leave it there for the GET.
      expect([(await head()).status, (await head()).status, (await head()).status]).toEqual([200, 200, 200]);
      const stream = await openSse(limited, id);
      expect(stream.res.status).toBe(200);
      // Now a GET would be refused, and HEAD says so (within the second a token takes to come back).
      const after = await head();
      if (after.status !== 200) expect({ status: after.status, retryAfter: after.headers.get('retry-after') }).toEqual({ status: 503, retryAfter: expect.stringMatching(/^\d+$/) });
      stream.close();
    } finally {
      await limited.close();
    }
  });
});

describe('streams per account', () => {
  it('SSE and WebSocket share the cap: the fourth is 429 with Retry-After on every transport; another account is not touched; a closed one frees a place', async () => {
    const { id } = await createOrder(srv);
    const bobs = await createOrder(srv, {}, 'bob');
    const first = await openSse(srv, id);
    const second = await openSse(srv, id);
    const ws = await openWs(srv);
    expect([first.res.status, second.res.status, ws instanceof WsClient]).toEqual([200, 200, true]);

    const sse = await openSse(srv, id);
    expect(sse.res.status).toBe(429);
    expect(sse.res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await sse.res.json()).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(await openWs(srv)).toMatchObject({ status: 429, headers: { 'retry-after': expect.stringMatching(/^\d+$/) } });
    expect(await openGraphqlWs(srv)).toMatchObject({ status: 429 });

    // Bob has his own places.
    const bob = await openSse(srv, bobs.id, {}, 'bob');
    expect(bob.res.status).toBe(200);
    bob.close();

    // Alice closes one: a new one is admitted once the server has seen it go.
    first.close();
    const again = await eventually(
      () => openSse(srv, id),
      (s) => s.res.status === 200,
    );
    again.close();
    second.close();
    if (ws instanceof WsClient) ws.ws.close();
  });

  it('a GraphQL connection that authenticates in connection_init takes its place then: over the cap it is closed 1008', async () => {
    for (let i = 0; i < 3; i++) expect(await openWs(srv)).toBeInstanceOf(WsClient);
    const inBand = await openGraphqlWs(srv, { headerToken: null });
    if (!(inBand instanceof WsClient)) throw new Error(`upgrade refused: ${inBand.status}`);
    inBand.send({ type: 'connection_init', payload: { authorization: `Bearer ${srv.alice.token}` } });
    expect(await inBand.closed()).toBe(1008);
    expect(inBand.closeReason).toMatch(/Too many streams/);
    // Bob, in band too, is admitted.
    const bob = new WebSocket(`${srv.url.replace('http', 'ws')}/graphql`, [GRAPHQL_WS]);
    const bobClient = new WsClient(bob);
    await new Promise((r) => bob.once('open', r));
    bobClient.send({ type: 'connection_init', payload: { authorization: `Bearer ${srv.bob.token}` } });
    await bobClient.until((m) => m.some((x) => x.type === 'connection_ack'));
    bob.close();
  });
});

describe('the cap and the accept limiter together', () => {
  it('an upgrade the limiter holds off (503) holds no place, and an account at its cap (429) spends no admission of others', async () => {
    let clock = 1_000_000;
    const limited = await startTestServer({ MAX_STREAMS_PER_ACCOUNT: '3', ACCEPT_RATE: '1', ACCEPT_BURST: '2' }, { now: () => clock });
    try {
      const { id } = await createOrder(limited);
      const statusOf = (r: WsClient | { status: number }) => (r instanceof WsClient ? 101 : r.status);
      // A storm of five: two admitted, three held off; none is told it is over its cap.
      const storm = await Promise.all([1, 2, 3, 4, 5].map(() => openWs(limited)));
      expect(storm.map(statusOf).sort()).toEqual([101, 101, 503, 503, 503]);
      clock += 10_000; // the limiter's burst (2) is back
      // The three held off took no place: a third connection fits the cap of three.
      expect(statusOf(await openWs(limited))).toBe(101);
      // Now at the cap: 429, on both transports, and no admission spent (one is left, for Bob).
      expect(statusOf(await openWs(limited))).toBe(429);
      expect((await openSse(limited, id)).res.status).toBe(429);
      expect(statusOf(await openWs(limited, '', limited.bob.token))).toBe(101);
      expect(statusOf(await openWs(limited, '', limited.bob.token))).toBe(503);
      for (const c of storm) if (c instanceof WsClient) c.ws.close();
    } finally {
      await limited.close();
    }
  });
});
