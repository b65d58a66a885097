/**
 * The per-account GraphQL cost budget over HTTP (GRAPHQL_COST_BUDGET, GRAPHQL_COST_RESTORE_RATE).
 * The buckets run on a fake clock, so "after Retry-After" is a clock step, not a wait.
 */
import fc from 'fast-check';
import { MemoryBuckets } from '../../src/limits';
import { sha256Hex } from '../../src/graphql';
import { persistedOperations } from '../../generated/graphql/persisted';
import { startTestServer, type TestServer } from '../support/server';
import { connectGraphqlWs, subscribe } from '../support/graphqlWs';
import { createOrder } from '../support/streams';

const GRAPH_READS = ['usersByIds', 'friendsOf', 'postsOf', 'commentsOf', 'ordersOfAccounts', 'userOfAccount', 'getOrder'] as const;
/** 2 + 10 x (2 + 1) = 32 points (friends without `first` is priced at the list factor 10). */
const FRIENDS = '{ user(id: "u1") { friends { name } } }';

interface Body {
  data?: unknown;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  extensions?: { cost?: { requestedQueryCost: number; throttleStatus: { maximumAvailable: number; currentlyAvailable: number; restoreRate: number } } };
}

/** A server with budget 100, restore 10/s and ceiling 100, on the clock `now`, with the demo data and its token. */
async function budgetServer(now: () => number): Promise<{ s: TestServer; token: string }> {
  const s = await startTestServer({ GRAPHQL_COST_BUDGET: '100', GRAPHQL_COST_RESTORE_RATE: '10', GRAPHQL_MAX_COST: '100' }, { buckets: new MemoryBuckets(now) });
  await s.store.seedDemo();
  return { s, token: await s.tokenFor('demo') };
}

describe('GraphQL cost budget (budget 100, restore 10/s, ceiling 100)', () => {
  let s: TestServer;
  let token: string;
  let t = 1_700_000_000_000;
  beforeAll(async () => {
    ({ s, token } = await budgetServer(() => t));
  });
  afterAll(() => s.close());

  const post = async (body: unknown, as = token) => {
    const res = await fetch(`${s.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${as}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, json: (await res.json()) as Body };
  };

  it('charges each query its cost, throttles exactly when the bucket would go below zero, and recovers after Retry-After', async () => {
    const spent: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await post({ query: FRIENDS });
      expect(r.status).toBe(200);
      expect(r.json.data).toBeDefined();
      spent.push(r.json.extensions!.cost!.throttleStatus.currentlyAvailable);
      expect(r.json.extensions!.cost).toMatchObject({ requestedQueryCost: 32, throttleStatus: { maximumAvailable: 100, restoreRate: 10 } });
    }
    expect(spent).toEqual([68, 36, 4]);
    // 4 points left: a 4-point query fits exactly, then nothing does.
    const exact = await post({ query: '{ viewer { id name } }' });
    expect(exact.status).toBe(200);
    expect(exact.json.extensions!.cost).toEqual({ requestedQueryCost: 4, throttleStatus: { maximumAvailable: 100, currentlyAvailable: 0, restoreRate: 10 } });

    const reads = GRAPH_READS.map((m) => jest.spyOn(s.store, m));
    const throttled = await post({ query: FRIENDS });
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toBe('4'); // 32 points at 10/s
    expect(throttled.json.data).toBeUndefined();
    expect(throttled.json.errors![0].extensions).toMatchObject({ code: 'THROTTLED', requestedQueryCost: 32, pointsNeeded: 32, retryAfterSeconds: 4 });
    expect(throttled.json.extensions!.cost).toEqual({ requestedQueryCost: 32, throttleStatus: { maximumAvailable: 100, currentlyAvailable: 0, restoreRate: 10 } });
    for (const spy of reads) expect(spy).not.toHaveBeenCalled(); // no resolver ran
    for (const spy of reads) spy.mockRestore();

    // 32 points at 10 per second come back in 3.2 s (Retry-After rounds up to whole seconds).
    t += 3_199;
    expect((await post({ query: FRIENDS })).status).toBe(429); // one millisecond short
    t += 1;
    const again = await post({ query: FRIENDS });
    expect(again.status).toBe(200);
    expect(again.json.extensions!.cost!.throttleStatus.currentlyAvailable).toBe(0);
  });

  it('carries extensions.cost beside the errors of a partial result', async () => {
    t += 100_000; // a full bucket
    const failing = jest.spyOn(s.store, 'friendsOf').mockRejectedValueOnce(new Error('a resolver failed'));
    try {
      const r = await post({ query: '{ viewer { id } user(id: "u1") { name friends(first: 2) { name } } }' });
      expect(r.status).toBe(200);
      expect(r.json.errors).toHaveLength(1);
      expect(r.json.data).toMatchObject({ viewer: { id: expect.any(String) } });
      expect(r.json.extensions!.cost).toMatchObject({ requestedQueryCost: expect.any(Number), throttleStatus: { maximumAvailable: 100, restoreRate: 10 } });
      expect(r.json.extensions!.cost!.requestedQueryCost).toBeGreaterThan(0);
    } finally {
      failing.mockRestore();
    }
  });

  it('keeps accounts apart, and charges persisted (APQ) operations too', async () => {
    t += 60_000;
    const other = await s.tokenFor('acme');
    const text = persistedOperations.FriendsOfFriends?.text ?? Object.values(persistedOperations)[0].text;
    const pq = { extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(text) } }, variables: { id: 'u1', first: 2 } };
    const first = await post({ query: text, ...pq }, other);
    expect(first.status).toBe(200);
    const cost = first.json.extensions!.cost!.requestedQueryCost;
    expect(cost).toBeGreaterThan(0);
    const byHash = await post(pq, other);
    expect(byHash.status).toBe(200);
    expect(byHash.json.extensions!.cost!.throttleStatus.currentlyAvailable).toBe(100 - 2 * cost);
  });
});

describe('GraphQL cost budget: responses refused before pricing', () => {
  let s: TestServer;
  let token: string;
  const t = 1_700_000_000_000; // the clock stands still: the bucket changes only by charges
  beforeAll(async () => {
    s = await startTestServer({ GRAPHQL_COST_BUDGET: '100', GRAPHQL_COST_RESTORE_RATE: '10', GRAPHQL_MAX_COST: '100' }, { buckets: new MemoryBuckets(() => t) });
    await s.store.seedDemo();
    token = await s.tokenFor('demo');
  });
  afterAll(() => s.close());

  const send = async (init: { method?: string; path?: string; body?: string; contentType?: string }) => {
    const res = await fetch(`${s.url}${init.path ?? '/graphql'}`, {
      method: init.method ?? 'POST',
      headers: { 'content-type': init.contentType ?? 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${token}` },
      body: init.body,
    });
    return { status: res.status, json: (await res.json()) as Body };
  };

  /** Malformed requests of every kind that is refused before the operation is priced. */
  const malformed = fc.oneof(
    fc.string().map((query) => ({ body: JSON.stringify({ query: `{ ${query}\n} }` }) })), // parse (or validation) errors: the last brace closes nothing
    fc.constantFrom('nope', 'viewer { nope }', 'user { id }', 'user(id: 1, id: 2) { id }').map((f) => ({ body: JSON.stringify({ query: `{ ${f} }` }) })), // validation errors
    fc
      .string()
      .filter((b) => {
        try {
          JSON.parse(b);
          return false;
        } catch {
          return true;
        }
      })
      .map((body) => ({ body })), // not JSON
    fc.constantFrom('[]', '1', '"x"', 'null', '{"query":1}', '{"variables":"x","query":"{ viewer { id } }"}', '{}').map((body) => ({ body })),
    fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 }).map((h) => ({ body: JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: h } } }) })), // APQ miss
    fc.constant({ body: JSON.stringify({ query: '{ viewer { id } }' }), contentType: 'text/plain' }), // 415
    fc.string().map((q) => ({ method: 'GET', path: `/graphql?query=${encodeURIComponent(`{ ${q}`)}&variables=%7B` })), // GET, variables not JSON
    fc.constant({ body: JSON.stringify({ query: 'query A { viewer { id } } query B { viewer { name } }', operationName: 'C' }) }), // unknown operation
  );

  it('carries extensions.cost with requestedQueryCost 0 and the bucket as it stands, charging nothing (generated)', async () => {
    const first = await send({ body: JSON.stringify({ query: FRIENDS }) });
    expect(first.json.extensions!.cost!.throttleStatus.currentlyAvailable).toBe(68);
    await fc.assert(
      fc.asyncProperty(malformed, async (req) => {
        const r = await send(req);
        expect(r.json.data).toBeUndefined();
        expect(r.json.errors!.length).toBeGreaterThan(0);
        expect(r.status === 200 ? r.json.errors![0].extensions!.code : r.status).toEqual(r.status === 200 ? 'PERSISTED_QUERY_NOT_FOUND' : expect.any(Number));
        if (r.status !== 200) expect(r.status).toBeGreaterThanOrEqual(400);
        if (r.status !== 200) expect(r.status).toBeLessThan(500);
        expect(r.json.extensions!.cost).toEqual({ requestedQueryCost: 0, throttleStatus: { maximumAvailable: 100, currentlyAvailable: 68, restoreRate: 10 } });
      }),
      { numRuns: 60 },
    );
    // Nothing was charged by any of them: the next priced query still starts from 68.
    expect((await send({ body: JSON.stringify({ query: FRIENDS }) })).json.extensions!.cost!.throttleStatus.currentlyAvailable).toBe(36);
  });
});

describe('GraphQL cost budget with the allowlist', () => {
  it('charges allowlisted operations too, and throttles them', async () => {
    const s = await startTestServer({ GRAPHQL_PERSISTED: 'allowlist', GRAPHQL_COST_BUDGET: '1000', GRAPHQL_COST_RESTORE_RATE: '1' }, { buckets: new MemoryBuckets(() => 1_700_000_000_000) });
    try {
      await s.store.seedDemo();
      const token = await s.tokenFor('demo');
      const text = persistedOperations.FriendsOfFriends.text;
      const body = JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(text) } }, variables: { id: 'u1', first: 10 } });
      const send = () => fetch(`${s.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body });
      const first = await send();
      const json = (await first.json()) as Body;
      expect(first.status).toBe(200);
      // 1 + 1 + 10 x (2 + 1 + 1 + 10 x (2 + 1 + 1)) + 2 = 444 points
      expect(json.extensions!.cost).toEqual({ requestedQueryCost: 444, throttleStatus: { maximumAvailable: 1000, currentlyAvailable: 556, restoreRate: 1 } });
      expect((await send()).status).toBe(200);
      const third = await send();
      expect(third.status).toBe(429);
      expect(((await third.json()) as Body).errors![0].extensions!.code).toBe('THROTTLED');
    } finally {
      await s.close();
    }
  });
});

describe('GraphQL cost budget off (the default)', () => {
  it('adds no cost extension and never throttles', async () => {
    const s = await startTestServer();
    try {
      await s.store.seedDemo();
      const token = await s.tokenFor('demo');
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${s.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ query: '{ user(id: "u1") { friends(first: 30) { name } } }' }),
        });
        expect(res.status).toBe(200);
        expect(((await res.json()) as Body).extensions).toBeUndefined();
      }
    } finally {
      await s.close();
    }
  });
});

describe('GraphQL cost budget: GET revalidation', () => {
  let s: TestServer;
  let token: string;
  let t = 1_700_000_000_000;
  beforeAll(async () => {
    ({ s, token } = await budgetServer(() => t));
  });
  afterAll(() => s.close());

  it('a GET still revalidates, though each answer carries the bucket as it stands: a weak tag over the answer without it', async () => {
    const url = `${s.url}/graphql?${new URLSearchParams({ query: '{ viewer { name } }' })}`;
    const init = (extra: Record<string, string> = {}) => ({ headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...extra } });
    const first = await fetch(url, init());
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]{22}"$/);
    t += 60_000; // the bucket refills: the next answer's extensions.cost differs, its data does not
    const again = await fetch(url, init({ 'if-none-match': etag }));
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
  });

  it("a GET refused 412 on its If-Match says what its query was charged (it ran: the tag is its answer's)", async () => {
    const url = `${s.url}/graphql?${new URLSearchParams({ query: '{ viewer { id name } }' })}`;
    const refused = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'application/json', 'if-match': '"nope"' } });
    expect(refused.status).toBe(412);
    const body = (await refused.json()) as Body;
    expect(body.errors?.[0].extensions?.code).toBe('PRECONDITION_FAILED');
    expect(body.extensions?.cost?.requestedQueryCost).toBe(4);
  });
});

describe('GraphQL cost budget: subscriptions', () => {
  let s: TestServer;
  beforeAll(async () => {
    ({ s } = await budgetServer(() => 1_700_000_000_000));
  });
  afterAll(() => s.close());

  it('a subscribe is charged once; one the bucket cannot pay is an error message with the same extensions as over HTTP, and the socket stays open', async () => {
    const { id } = await createOrder(s);
    const c = await connectGraphqlWs(s);
    const errors = (x: string) => c.messages.filter((m) => m.type === 'error' && m.id === x).flatMap((m) => m.payload as { message: string; extensions?: Record<string, unknown> }[]);
    // Each subscribe costs the same; the clock stands still, so the bucket empties within 100 of them.
    let n = 0;
    for (; n < 100; n++) {
      subscribe(c, `s${n}`, { id: String(id) });
      await c.until((m) => m.some((x) => x.id === `s${n}` && (x.type === 'next' || x.type === 'error')));
      if (errors(`s${n}`).length > 0) break;
    }
    expect(n).toBeGreaterThan(0);
    const [refusal] = errors(`s${n}`);
    expect(refusal.extensions).toEqual({ code: 'THROTTLED', requestedQueryCost: expect.any(Number), pointsNeeded: expect.any(Number), retryAfterSeconds: expect.any(Number) });
    expect(refusal.extensions!['pointsNeeded']).toBeGreaterThan(0);
    expect(refusal.message).toMatch(/^Throttled: this operation costs \d+ points and \d+ are available; 10 are restored per second, retry after \d+ s$/);
    expect(c.closeCode).toBeUndefined();
    c.ws.close();
  });
});
