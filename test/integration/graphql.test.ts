/**
 * /graphql against the running server over a real SQLite file with the demo data:
 * execution and access, DataLoader batching, the validation pass (depth, cost, first)
 * rejecting before any resolver runs, APQ and the allowlist, introspection, bad input.
 */
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../support/server';
import { persistedOperations } from '../../generated/graphql/persisted';
import { sha256Hex } from '../../src/graphql';
import type { Store } from '../../src/store';

/** Both adapters count the statements they run. */
type Counting = Store & { queryCount: number };

const GRAPH_READS = ['usersByIds', 'friendsOf', 'postsOf', 'commentsOf', 'ordersOfAccounts', 'userOfAccount', 'getOrder'] as const;
const OVER_COST = '{ user(id: "u1") { friends { friends { friends { name } } } } }'; // 3222
const TOO_DEEP = '{ user(id: "u1") { friends(first: 1) { friends(first: 1) { friends(first: 1) { friends(first: 1) { name } } } } } }';

interface GqlBody {
  data?: unknown;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

async function start(env: Record<string, string> = {}) {
  const srv = await startTestServer(env);
  await srv.store.seedDemo();
  const demo = await srv.tokenFor('demo');
  const acme = await srv.tokenFor('acme');
  const post = async (body: unknown, opts: { token?: string | null; accept?: string; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: opts.accept ?? 'application/graphql-response+json', ...opts.headers };
    if (opts.token !== null) headers.authorization = `Bearer ${opts.token ?? demo}`;
    const res = await fetch(`${srv.url}/graphql`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const text = await res.text();
    let json: GqlBody | undefined;
    try {
      json = JSON.parse(text) as GqlBody;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, json, text };
  };
  const get = async (params: Record<string, unknown>, token = demo) => {
    const qs = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    const res = await fetch(`${srv.url}/graphql?${qs}`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
    return { status: res.status, headers: res.headers, json: (await res.json()) as GqlBody };
  };
  return { srv, demo, acme, post, get };
}

function spyGraphReads(store: TestServer['store']) {
  return GRAPH_READS.map((m) => jest.spyOn(store, m));
}

describe('GraphQL: execution and access', () => {
  let t: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    t = await start();
  });
  afterAll(() => t.srv.close());

  it("pages through the viewer's orders with after, every order once, as REST lists them; an after that is no order id is BAD_USER_INPUT", async () => {
    for (let i = 0; i < 3; i++) {
      const created = await t.srv.fetch('/orders', { method: 'POST', headers: { authorization: `Bearer ${t.demo}`, 'content-type': 'application/json' }, body: JSON.stringify({ note: `page ${i}` }) });
      expect(created.status).toBe(201);
    }
    const query = 'query($after: ID) { viewer { orders(first: 2, after: $after) { id } } }';
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 100; i++) {
      const r = await t.post({ query, variables: { after } });
      const page = (r.json?.data as { viewer: { orders: { id: string }[] } }).viewer.orders;
      if (page.length === 0) break;
      seen.push(...page.map((o) => o.id));
      after = page[page.length - 1].id;
    }
    const rest = (await (await t.srv.fetch('/orders?limit=100', { headers: { authorization: `Bearer ${t.demo}` } })).json()) as { orders: { id: number }[] };
    expect(seen.length).toBeGreaterThan(2);
    expect(seen).toEqual(rest.orders.map((o) => String(o.id)));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom('0', '-1', '01', '1.0', '9007199254740992', ''),
          fc.string({ maxLength: 8 }).filter((s) => !/^[1-9][0-9]*$/.test(s)),
        ),
        async (bad) => {
          const r = await t.post({ query, variables: { after: bad } });
          expect(r.status).toBe(200); // a field error: the viewer is null, the error says why
          expect(r.json?.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
        },
      ),
      { numRuns: 20 },
    );
  });

  it('answers a query with data and no errors', async () => {
    const r = await t.post({ query: '{ viewer { id name } user(id: "u2") { name } }' });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ data: { viewer: { id: 'u1', name: 'Ada' }, user: { name: 'Brian' } } });
  });

  it('a GET whose query string is not percent-encoded UTF-8 is a 400, not a replacement character', async () => {
    for (const query of ['query=%7Bviewer%7Bid%7D%7D%23%FF', 'query=%7Bviewer%7Bid%7D%7D&variables=%7B%22x%22%3A%22%C3%28%22%7D', 'query=%7Bviewer%7Bid%7D%7D%25zz%zz']) {
      const res = await fetch(`${t.srv.url}/graphql?${query}`, { headers: { authorization: `Bearer ${t.demo}`, accept: 'application/graphql-response+json' } });
      expect(res.status).toBe(400);
      expect(((await res.json()) as GqlBody).errors?.[0].extensions?.code).toBe('BAD_REQUEST');
    }
  });

  it('a GET with a parameter given twice is a 400 BAD_REQUEST naming it, never the first one run', async () => {
    const once: Record<string, string> = { query: 'query A { viewer { id } }', operationName: 'A', variables: '{}', extensions: '{}' };
    for (const name of Object.keys(once)) {
      const params = new URLSearchParams(once);
      params.append(name, once[name]);
      const res = await fetch(`${t.srv.url}/graphql?${params}`, { headers: { authorization: `Bearer ${t.demo}` } });
      expect(res.status).toBe(400);
      const body = (await res.json()) as GqlBody;
      expect(body.errors?.[0]).toMatchObject({ message: `'${name}' may appear once`, extensions: { code: 'BAD_REQUEST' } });
    }
  });

  it('a GET reads everything after the first `?`: a later literal `?` is data (RFC 3986 3.4)', async () => {
    const res = await fetch(`${t.srv.url}/graphql?x=?&query=${encodeURIComponent('{ viewer { id } }')}`, { headers: { authorization: `Bearer ${t.demo}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { viewer: { id: 'u1' } } });
  });

  it('a syntax error keeps its location', async () => {
    const r = await t.post({ query: '{ viewer { name }' });
    expect(r.status).toBe(400);
    expect(r.json?.errors?.[0]).toMatchObject({ extensions: { code: 'GRAPHQL_PARSE_FAILED' }, locations: [{ line: 1, column: 18 }] });
  });

  it('a field error of a partial answer carries a code too (INTERNAL_SERVER_ERROR: a total an Int cannot hold); totalCentsSafe holds it', async () => {
    const created = await fetch(`${t.srv.url}/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.demo}`, 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ sku: 'BIG-1', quantity: 1000, unit_price_cents: 99_999_999 }], currency: 'EUR' }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const r = await t.post({ query: `{ viewer { name } o: order(id: "${id}") { id totalCents } }` });
    expect(r.status).toBe(200);
    expect(r.json?.data).toEqual({ viewer: { name: 'Ada' }, o: null });
    expect(r.json?.errors?.map((e) => e.extensions?.code)).toEqual(['INTERNAL_SERVER_ERROR']);
    // totalCentsSafe holds every total REST accepts, on graphql-js and on the compiled form (the second run).
    for (let run = 0; run < 3; run++) {
      const safe = await t.post({ query: `{ o: order(id: "${id}") { id totalCentsSafe } }` });
      expect(safe.json).toEqual({ data: { o: { id: String(id), totalCentsSafe: 99_999_999_000 } } });
    }
  });

  it('null sent for a defaulted variable where a value is required: the same field error on every run (compiled too), coded BAD_USER_INPUT', async () => {
    const query = 'query A($i: Boolean = true, $id: ID = "u2") { viewer { id name @include(if: $i) } user(id: $id) { name } }';
    for (let run = 0; run < 3; run++) {
      const r = await t.post({ query, variables: { i: null, id: null } });
      expect(r.status).toBe(200);
      expect(r.json?.data).toEqual({ viewer: null, user: null });
      expect(r.json?.errors?.map((e) => [e.message, e.extensions?.code]).sort()).toEqual([
        ['Argument "id" of non-null type "ID!" must not be null.', 'BAD_USER_INPUT'],
        ['Argument "if" of non-null type "Boolean!" must not be null.', 'BAD_USER_INPUT'],
      ]);
    }
    // Not sent, the default applies, on every run.
    for (let run = 0; run < 3; run++) expect((await t.post({ query })).json).toEqual({ data: { viewer: { id: 'u1', name: 'Ada' }, user: { name: 'Brian' } } });
  });

  it('an operationName naming no operation is named in the refusal; an empty one is absent, as an empty variables= is (GET and POST)', async () => {
    const r = await t.post({ query: '{ viewer { id } }', operationName: 'Nope' });
    expect(r.status).toBe(400);
    expect(r.json?.errors?.[0].message).toBe("No operation named 'Nope'");
    expect((await t.post({ query: '{ viewer { id } }', operationName: '' })).json).toEqual({ data: { viewer: { id: 'u1' } } });
    expect((await t.get({ query: '{ viewer { id } }', operationName: '', variables: '' })).json).toEqual({ data: { viewer: { id: 'u1' } } });
    const several = await t.post({ query: 'query A { viewer { id } } query B { viewer { name } }', operationName: '' });
    expect([several.status, several.json?.errors?.[0].message]).toEqual([400, 'operationName is required for a document with several operations']);
  });

  it("the variables are the selected operation's: the others are priced and checked with their own defaults (and the verdict is kept per operation)", async () => {
    // A costs 3 x 50^3-ish with f = 50, and little with its default f = 1; B costs almost nothing.
    const query = 'query A($f: Int = 1) { viewer { friends(first: $f) { friends(first: $f) { friends(first: $f) { id } } } } } query B { viewer { id } }';
    const asB = await t.post({ query, operationName: 'B', variables: { f: 50 } });
    expect([asB.status, asB.json]).toEqual([200, { data: { viewer: { id: 'u1' } } }]);
    const asA = await t.post({ query, operationName: 'A', variables: { f: 50 } });
    expect([asA.status, asA.json?.errors?.[0]?.extensions?.code]).toEqual([400, 'GRAPHQL_VALIDATION_FAILED']);
    // `first` out of its range counts for the operation that runs only, too.
    expect((await t.post({ query, operationName: 'B', variables: { f: 1000 } })).status).toBe(200);
    expect((await t.post({ query, operationName: 'A', variables: { f: 1000 } })).status).toBe(400);
    // Asked again in the other order: the verdicts are kept apart.
    expect((await t.post({ query, operationName: 'B', variables: { f: 50 } })).status).toBe(200);
  });

  it("judges a POST's If-Match and If-None-Match as a REST create does: the endpoint exists and has no tag", async () => {
    const q = { query: '{ viewer { id } }' };
    const answer = async (headers: Record<string, string>) => {
      const r = await t.post(q, { headers });
      return [r.status, r.json?.errors?.[0]?.extensions?.code ?? 'ok'];
    };
    expect(await answer({ 'if-match': '"nope"' })).toEqual([412, 'PRECONDITION_FAILED']);
    expect(await answer({ 'if-none-match': '*' })).toEqual([412, 'PRECONDITION_FAILED']);
    expect(await answer({ 'if-match': '*' })).toEqual([200, 'ok']);
    expect(await answer({ 'if-none-match': '"a", "b"' })).toEqual([200, 'ok']);
    expect(await answer({ 'if-match': 'no quotes' })).toEqual([400, 'BAD_REQUEST']);
  });

  it('answers in the type Accept prefers by q, and 406 naming both when q=0 refuses both', async () => {
    const q = '{ viewer { id } }';
    const typeFor = async (accept: string) => (await t.post({ query: q }, { accept })).headers.get('content-type')?.split(';')[0];
    expect(await typeFor('application/json;q=0.5, application/graphql-response+json;q=0.9')).toBe('application/graphql-response+json');
    expect(await typeFor('application/graphql-response+json;q=0.1, application/json')).toBe('application/json');
    const refused = await t.post({ query: q }, { accept: 'application/json;q=0, application/graphql-response+json;q=0' });
    expect(refused.status).toBe(406);
    expect(refused.headers.get('accept')).toMatch(/application\/graphql-response\+json.*application\/json/);
  });

  it('names Accept in Vary on every answer, whose media type it chose (data, refusals, GET and POST)', async () => {
    const q = '{ viewer { id } }';
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      const answers = [
        (await t.post({ query: q }, { accept })).headers,
        (await t.post({ query: '{ nope }' }, { accept })).headers,
        (await t.post({ query: q }, { accept, token: null })).headers,
        (await fetch(`${t.srv.url}/graphql?query=${encodeURIComponent(q)}`, { headers: { authorization: `Bearer ${t.demo}`, accept } })).headers,
      ];
      for (const headers of answers) {
        expect(headers.get('content-type')?.split(';')[0]).toBe(accept);
        expect((headers.get('vary') ?? '').toLowerCase().split(/\s*,\s*/)).toContain('accept');
      }
    }
  });

  it("reads orders only for the caller's account, through order(id) and User.orders", async () => {
    const mine = await t.post({ query: '{ viewer { orders(first: 2) { id status totalCents } } }' });
    expect(mine.json?.data).toEqual({ viewer: { orders: [{ id: '1', status: 'pending', totalCents: 3000 }, expect.objectContaining({ id: '2' })] } });
    const asAcme = await t.post({ query: '{ order(id: "1") { id } user(id: "u1") { orders { id } } }' }, { token: t.acme });
    expect(asAcme.json?.data).toEqual({ order: null, user: { orders: [] } });
    const own = await t.post({ query: '{ order(id: "6") { id status } }' }, { token: t.acme });
    expect(own.json?.data).toEqual({ order: { id: '6', status: 'pending' } });
  });

  it('answers 401 with UNAUTHENTICATED and a Bearer challenge without a valid token', async () => {
    for (const token of [null, 'ol_nope']) {
      const r = await t.post({ query: '{ viewer { id } }' }, { token });
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(r.json?.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    }
  });
});

/**
 * Statement counts, each test on its own: the auth cache is off (AUTH_CACHE_TTL_MS=0), so every
 * request makes exactly one token lookup, counted and subtracted, whatever ran before and however
 * long it took (a warm cache would depend on an earlier request and on its 5 s TTL).
 */
describe('GraphQL: statements per query', () => {
  let t: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    t = await start({ AUTH_CACHE_TTL_MS: '0' });
  });
  afterAll(() => t.srv.close());
  afterEach(() => jest.restoreAllMocks());

  /** Statements the store ran for one request, less its one token lookup (checked to be one). */
  async function graphStatements(body: unknown): Promise<{ count: number; json: GqlBody | undefined; status: number }> {
    const store = t.srv.store as Counting;
    const lookups = jest.spyOn(store, 'tokenBySelector');
    const before = store.queryCount;
    const r = await t.post(body);
    expect(lookups).toHaveBeenCalledTimes(1);
    lookups.mockRestore();
    return { count: store.queryCount - before - 1, json: r.json, status: r.status };
  }

  it('batches with DataLoader: one store query per level, not one per node', async () => {
    const store = t.srv.store as Counting;
    const [usersByIds, friendsOf] = [jest.spyOn(store, 'usersByIds'), jest.spyOn(store, 'friendsOf')];
    const r = await graphStatements({ query: persistedOperations.FriendsOfFriends.text, variables: { id: 'u1', first: 4 } });
    const friends = (r.json?.data as { user: { friends: { friends: unknown[] }[] } }).user.friends;
    expect(friends).toHaveLength(4);
    expect(friends.every((f) => f.friends.length === 4)).toBe(true); // 1 + 4 + 16 nodes
    expect(usersByIds).toHaveBeenCalledTimes(1);
    expect(friendsOf).toHaveBeenCalledTimes(2); // level 1 and level 2
    expect(r.count).toBe(3);
  });

  it('a comment feed (posts, comments, authors) is one query per level too', async () => {
    const r = await graphStatements({ query: persistedOperations.UserFeed.text, variables: { id: 'u3' } });
    expect(r.status).toBe(200);
    expect(r.json?.errors).toBeUndefined();
    expect(r.count).toBe(4); // user, posts, comments, authors
  });
});

describe('GraphQL: the validation pass rejects before any resolver runs', () => {
  let t: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    t = await start();
  });
  afterAll(() => t.srv.close());
  afterEach(() => jest.restoreAllMocks());

  it.each([
    ['over the cost ceiling (3222)', OVER_COST],
    ['five nested list levels', TOO_DEEP],
    ['a wide first: 1000', '{ user(id: "u1") { friends(first: 1000) { id } } }'],
    ['first out of range via a variable', { query: 'query Q($n: Int) { user(id: "u1") { friends(first: $n) { id } } }', variables: { n: 101 } }],
    ['a mutation beside the query run (the schema has no Mutation type)', { query: 'query A { viewer { name } } mutation B { deleteEverything(really: true) { id } }', operationName: 'A' }],
    ['a mutation alone', 'mutation { x }'],
  ])('%s: 400 whatever the Accept, GRAPHQL_VALIDATION_FAILED, no data, no resolver', async (_name, q) => {
    const spies = spyGraphReads(t.srv.store);
    for (const accept of ['application/json', 'application/graphql-response+json', '*/*']) {
      const r = await t.post(typeof q === 'string' ? { query: q } : q, { accept });
      expect(r.status).toBe(400);
      expect(r.json).not.toHaveProperty('data');
      expect(r.json?.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(r.json?.errors?.[0].extensions).not.toHaveProperty('cost');
    }
    for (const s of spies) expect(s).not.toHaveBeenCalled();
  });

  it('a fragment bomb (cost 0, depth 1, 2^21 selections written out) is refused every time, never compiled', async () => {
    let fragments = 'fragment F0 on User { __typename }\n';
    for (let i = 1; i <= 21; i++) fragments += `fragment F${i} on User { ... on User { ...F${i - 1} } ... on User { ...F${i - 1} } }\n`;
    const query = `{ viewer { ...F21 } }\n${fragments}`;
    const spies = spyGraphReads(t.srv.store);
    // The second run of a text is where graphql-jit would compile it: both are refused before.
    for (let i = 0; i < 2; i++) {
      const r = await t.post({ query });
      expect(r.status).toBe(400);
      expect(r.json?.errors?.[0]).toMatchObject({ message: expect.stringMatching(/more selections than the limit allows once its fragments are written out/), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    }
    for (const s of spies) expect(s).not.toHaveBeenCalled();
  });

  it('counts requests by outcome in the operators’ /metrics', async () => {
    const count = async (outcome: string) => (await t.srv.metrics.graphqlRequests.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
    const [rejected, ok] = [await count('GRAPHQL_VALIDATION_FAILED'), await count('ok')];
    expect((await t.post({ query: OVER_COST })).status).toBe(400);
    expect((await t.post({ query: '{ viewer { id } }' })).status).toBe(200);
    expect(await count('GRAPHQL_VALIDATION_FAILED')).toBe(rejected + 1);
    expect(await count('ok')).toBe(ok + 1);
    const text = await t.srv.scrape();
    expect(text).toMatch(/^orderline_graphql_requests_total\{outcome="GRAPHQL_VALIDATION_FAILED"\} \d+$/m);
  });

  it('a cached text is still priced per request: the same text is accepted or rejected by its variables', async () => {
    const q = 'query Wide($n: Int) { user(id: "u1") { friends(first: $n) { friends(first: $n) { name } } } }';
    for (let i = 0; i < 3; i++) {
      expect((await t.post({ query: q, variables: { n: 3 } })).status).toBe(200); // 2 + 3 x (2 + 3 x 3) = 35
      const spies = spyGraphReads(t.srv.store);
      const r = await t.post({ query: q, variables: { n: 40 } }); // 2 + 40 x (2 + 40 x 3) = 4882
      expect(r.status).toBe(400);
      expect(r.json?.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      for (const s of spies) expect(s).not.toHaveBeenCalled();
      jest.restoreAllMocks();
    }
  });

  it('accepts the 522-point shape and runs it', async () => {
    const r = await t.post({ query: '{ user(id: "u1") { posts { comments { author { name } } } } }' });
    expect(r.status).toBe(200);
    expect(r.json?.errors).toBeUndefined();
  });

  it('also applies to persisted operations: a registered hash is validated with its variables', async () => {
    const op = persistedOperations.FriendsOfFriends;
    const spies = spyGraphReads(t.srv.store);
    const r = await t.post({ extensions: { persistedQuery: { version: 1, sha256Hash: op.hash } }, variables: { id: 'u1', first: 100 } });
    // 2 + 100 x (2 + 1 + 1 + 100 x 4) = 40402: over the ceiling even though the operation is allowlisted
    expect(r.status).toBe(400);
    expect(r.json?.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    for (const s of spies) expect(s).not.toHaveBeenCalled();
  });

  it('allows introspection outside production (exempt from depth and cost)', async () => {
    const r = await t.post({ query: '{ __schema { types { name fields { name type { name ofType { name ofType { name } } } } } } }' });
    expect(r.status).toBe(200);
    expect(r.json?.errors).toBeUndefined();
  });

  it('bounds introspection outside production: aliased copies of it are refused before anything runs', async () => {
    const copies = Array.from({ length: 70 }, (_, i) => `a${i}: __schema { types { name description fields { name description args { name description } type { name } } } }`).join(' ');
    const many = await t.post({ query: `{ ${copies} }` });
    expect(many.status).toBe(400);
    expect(many.json?.errors?.[0]).toMatchObject({ message: 'The operation selects 70 introspection fields (__schema, __type): at most 2 per operation', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    const inside = await t.post({ query: '{ __schema { a: types { name } b: types { name } } }' });
    expect(inside.status).toBe(400);
    expect(inside.json?.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});

describe('GraphQL: configuration', () => {
  it('GRAPHQL_SHOW_COST=1 shows the cost and the ceiling', async () => {
    const t = await start({ GRAPHQL_SHOW_COST: '1' });
    try {
      const r = await t.post({ query: OVER_COST });
      expect(r.json?.errors?.[0].extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', cost: 3222, maxCost: 1000 });
    } finally {
      await t.srv.close();
    }
  });

  it('NODE_ENV=production turns introspection off (a validation error)', async () => {
    const t = await start({ NODE_ENV: 'production' });
    try {
      const r = await t.post({ query: '{ __schema { queryType { name } } }' });
      expect(r.status).toBe(400);
      expect(r.json?.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect((await t.post({ query: '{ viewer { id } }' })).status).toBe(200);
    } finally {
      await t.srv.close();
    }
  });
});

describe('GraphQL: automatic persisted queries (Apollo protocol)', () => {
  let t: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    t = await start();
  });
  afterAll(() => t.srv.close());

  const Q = '{ user(id: "u4") { id name } }';
  const ext = (text: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256Hex(text) } });

  it('POST: unknown hash -> 200 PERSISTED_QUERY_NOT_FOUND; retry with text -> data; then hash only -> data', async () => {
    const miss = await t.post({ extensions: ext(Q) }, { accept: 'application/json' });
    expect(miss.status).toBe(200);
    expect(miss.json).toEqual({ errors: [expect.objectContaining({ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } })] });
    const full = await t.post({ query: Q, extensions: ext(Q) });
    expect(full.json).toEqual({ data: { user: { id: 'u4', name: 'Dana' } } });
    const hit = await t.post({ extensions: ext(Q) });
    expect(hit.json).toEqual({ data: { user: { id: 'u4', name: 'Dana' } } });
  });

  it('GET works the same way; the miss is not for caches to keep', async () => {
    const q = '{ user(id: "u5") { name } }';
    const miss = await t.get({ extensions: ext(q) });
    expect(miss.json.errors?.[0].extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(miss.headers.get('cache-control')).toBe('private, no-cache, must-revalidate');
    expect((await t.get({ query: q, extensions: ext(q) })).json).toEqual({ data: { user: { name: 'Emil' } } });
    expect((await t.get({ extensions: ext(q) })).json).toEqual({ data: { user: { name: 'Emil' } } });
    expect(miss.headers.get('etag')).toBeNull();
  });

  it("a GET's answer is private, revalidated each time: an ETag of its bytes, 304 on If-None-Match; a POST's has neither", async () => {
    const q = '{ viewer { id name } }';
    const url = `${t.srv.url}/graphql?${new URLSearchParams({ extensions: JSON.stringify(ext(q)), query: q })}`;
    const as = (token: string, extra: Record<string, string> = {}) => ({ headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...extra } });
    const first = await fetch(url, as(t.demo));
    const etag = first.headers.get('etag');
    expect(first.status).toBe(200);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    expect(await first.json()).toEqual({ data: { viewer: { id: 'u1', name: 'Ada' } } });
    // The same answer: the same tag, and 304 without a body for a client that holds it (a list and a weak tag match too).
    for (const inm of [etag!, `W/${etag!}`, `"other", ${etag!}`]) {
      const again = await fetch(url, as(t.demo, { 'if-none-match': inm }));
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(etag);
      expect(again.headers.get('cache-control')).toBe('private, no-cache');
      expect(again.headers.get('vary')).toMatch(/Accept/);
      expect(await again.text()).toBe('');
    }
    // Another account's answer differs: another tag, and its If-None-Match of the first is a 200.
    const other = await fetch(url, as(t.acme, { 'if-none-match': etag! }));
    expect(other.status).toBe(200);
    expect(other.headers.get('etag')).not.toBe(etag);
    // HEAD: the same head.
    const head = await fetch(url, { method: 'HEAD', ...as(t.demo) });
    expect([head.status, head.headers.get('etag')]).toEqual([200, etag]);
    // POST: no tag, no caching policy.
    const posted = await t.post({ query: q });
    expect([posted.headers.get('etag'), posted.headers.get('cache-control')]).toEqual([null, null]);
    // The graphql-response+json answer is another representation: its own tag (RFC 9110 8.8.1), and the json one's is no 304.
    const typed = await fetch(url, as(t.demo, { accept: 'application/graphql-response+json', 'if-none-match': etag! }));
    expect(typed.status).toBe(200);
    expect(typed.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(typed.headers.get('etag')).not.toBe(etag);
  });

  it("a GET's If-Match is judged on the answer it would get: its tag or * runs, any other tag is 412 PRECONDITION_FAILED", async () => {
    const q = '{ viewer { name } }';
    const url = `${t.srv.url}/graphql?${new URLSearchParams({ query: q })}`;
    const as = (extra: Record<string, string> = {}) => ({ headers: { authorization: `Bearer ${t.demo}`, accept: 'application/json', ...extra } });
    const etag = (await fetch(url, as())).headers.get('etag')!;
    for (const ifMatch of [etag, '*', `"nope", ${etag}`]) expect((await fetch(url, as({ 'if-match': ifMatch }))).status).toBe(200);
    for (const ifMatch of ['"nope"', `W/${etag}`]) {
      const refused = await fetch(url, as({ 'if-match': ifMatch }));
      expect(refused.status).toBe(412);
      expect(((await refused.json()) as GqlBody).errors?.[0].extensions?.code).toBe('PRECONDITION_FAILED');
    }
  });

  it('a text that does not match its hash is a 400 and registers nothing', async () => {
    const r = await t.post({ query: Q, extensions: ext('{ viewer { id } }') });
    expect(r.status).toBe(400);
    expect(r.json?.errors?.[0].extensions?.code).toBe('PERSISTED_QUERY_HASH_MISMATCH');
  });

  it('registers nothing for a mutation sent with GET (405)', async () => {
    const m = 'mutation { __typename }';
    const refused = await t.get({ query: m, extensions: ext(m) });
    expect(refused.status).toBe(405);
    expect(refused.json?.errors?.[0].extensions?.code).toBe('METHOD_NOT_ALLOWED');
    const after = await t.post({ extensions: ext(m) });
    expect(after.json?.errors?.[0].extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    // A GET mutation is 405 whatever else is wrong with it (an unused variable here).
    for (const bad of ['mutation($a: Int) { x }', 'query Q { viewer { id } } mutation M { x }']) {
      const r = await t.get({ query: bad, ...(bad.startsWith('query') ? { operationName: 'M' } : {}) });
      expect([r.status, r.headers.get('allow')]).toEqual([405, 'POST']);
    }
  });

  it('registers a text only after it validated', async () => {
    const rejected = await t.post({ query: OVER_COST, extensions: ext(OVER_COST) });
    expect(rejected.status).toBe(400);
    const after = await t.post({ extensions: ext(OVER_COST) });
    expect(after.json?.errors?.[0].extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});

describe('GraphQL: allowlist mode', () => {
  let t: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    t = await start({ GRAPHQL_PERSISTED: 'allowlist' });
  });
  afterAll(() => t.srv.close());

  it('runs the operations of contracts/operations/ by hash', async () => {
    const op = persistedOperations.User;
    const r = await t.post({ extensions: { persistedQuery: { version: 1, sha256Hash: op.hash } }, variables: { id: 'u2' } });
    expect(r.json).toEqual({ data: { user: { id: 'u2', name: 'Brian' } } });
  });

  it('refuses anything else with 400 PERSISTED_QUERY_NOT_ALLOWED, with no fallback to text', async () => {
    const q = '{ viewer { id } }';
    for (const body of [{ query: q }, { extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(q) } } }, { query: q, extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(q) } } }]) {
      const r = await t.post(body, { accept: 'application/json' });
      expect(r.status).toBe(400);
      expect(r.json?.errors?.[0].extensions?.code).toBe('PERSISTED_QUERY_NOT_ALLOWED');
      expect(r.json).not.toHaveProperty('data');
    }
  });
});

describe('GraphQL: bad documents are 4xx, never 5xx (generated)', () => {
  let t: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    t = await start({ BODY_LIMIT_BYTES: String(256 * 1024) });
  });
  afterAll(() => t.srv.close());

  const expect4xx = (r: { status: number; json?: GqlBody; text: string }) => {
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.json?.errors?.[0].extensions?.code).toEqual(expect.any(String));
  };

  it('arbitrary query text, operation names and variables', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string(), fc.stringMatching(/^[{}()a-z_:$!@ .0-9"[\]]{0,80}$/)),
        fc.option(fc.oneof(fc.string(), fc.integer()), { nil: undefined }),
        fc.option(fc.anything(), { nil: undefined }),
        async (query, operationName, variables) => {
          const r = await t.post({ query, operationName, variables });
          expect(r.status).toBeLessThan(500);
          if (r.status >= 400) expect(r.json?.errors?.[0].extensions?.code).toEqual(expect.any(String));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('bodies that are not one GraphQL request: batches, scalars, bad JSON, wrong field types', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.array(fc.record({ query: fc.constant('{ viewer { id } }') }), { minLength: 1, maxLength: 5 }).map((b) => JSON.stringify(b)),
          fc
            .jsonValue()
            .filter((v) => typeof v !== 'object' || v === null)
            .map((v) => JSON.stringify(v)),
          fc.string().filter((s) => {
            try {
              JSON.parse(s);
              return false;
            } catch {
              return true;
            }
          }),
          fc.record({ query: fc.oneof(fc.integer(), fc.boolean(), fc.array(fc.string())) }).map((b) => JSON.stringify(b)),
          fc.record({ query: fc.constant('{ viewer { id } }'), variables: fc.oneof(fc.string(), fc.array(fc.integer()), fc.integer()) }).map((b) => JSON.stringify(b)),
        ),
        async (body) => expect4xx(await t.post(body)),
      ),
      { numRuns: 100 },
    );
  });

  it('variables that do not fit their types: 400 BAD_USER_INPUT', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.boolean(),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
          fc.object(),
          // Integers no GraphQL Int holds (32-bit): the cost and `first` rules must not judge them first.
          fc.oneof(fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: Number.MIN_SAFE_INTEGER, max: -(2 ** 31) - 1 }), fc.constant(1e20)),
        ),
        async (first) => {
          // (JSON has no NaN or Infinity: they would arrive as null, which an optional Int accepts)
          fc.pre(!(typeof first === 'number' && Number.isInteger(first) && Math.abs(first) < 2 ** 31));
          const r = await t.post({ query: persistedOperations.FriendsOfFriends.text, variables: { id: 'u1', first } });
          expect4xx(r);
          expect(r.status).toBe(400);
          expect(r.json?.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
        },
      ),
      { numRuns: 50 },
    );
    const r = await t.post({ query: persistedOperations.User.text, variables: {} });
    expect(r.status).toBe(400);
    expect(r.json?.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('thousands of aliases or directives, deep nesting, fragment cycles and megabyte documents', async () => {
    const aliases = `{ ${Array.from({ length: 3000 }, (_, i) => `a${i}: viewer { id }`).join(' ')} }`;
    const directives = `{ viewer { id ${'@include(if: true) '.repeat(3000)} } }`;
    const nested = `{ ${'user(id: "u1") { friends { '.repeat(200)} id ${'} } '.repeat(200)} }`;
    const cycle = '{ viewer { ...A } } fragment A on User { friends { ...B } } fragment B on User { friends { ...A } }';
    const huge = `{ viewer { ${'id '.repeat(200_000)} } }`; // 600 KB, above the parser's token limit
    const tooBig = `{ viewer { ${'id '.repeat(400_000)} } }`; // over the body limit
    for (const query of [aliases, directives, nested, cycle, huge]) {
      const r = await t.post({ query });
      expect4xx(r);
    }
    const big = await t.post({ query: tooBig });
    expect(big.status).toBe(413);
    // Named as REST names it: one code for one refusal on both interfaces.
    expect(big.json?.errors?.[0].extensions?.code).toBe('PAYLOAD_TOO_LARGE');
    const rest = await t.srv.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ note: 'x'.repeat(tooBig.length) }) });
    expect(rest.status).toBe(413);
    expect(((await rest.json()) as { code: string }).code).toBe('PAYLOAD_TOO_LARGE');
    const plain = await t.post('{ viewer { id } }', { headers: { 'content-type': 'text/plain' } });
    expect(plain.status).toBe(415);
    expect(plain.json?.errors?.[0].extensions?.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    // the server still answers
    expect((await t.post({ query: '{ viewer { id } }' })).status).toBe(200);
  });
});
