/** The GraphQL client's behaviour against a fake /graphql (no server, no timing). */
import { parse } from 'graphql';
import { createGraphqlClient, GraphqlRequestError, type TypedDocumentNode } from './graphql';
import { OrderlineError } from './errors';

function fake(answers: (() => Response | Promise<Response>)[]) {
  const seen: { headers: Headers; signal: AbortSignal | null }[] = [];
  const fetch = (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push({ headers: req.headers, signal: init?.signal ?? null });
    const next = answers[Math.min(seen.length, answers.length) - 1];
    return Promise.resolve(next());
  };
  return { fetch: fetch, seen };
}
const gqlJson = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/graphql-response+json', 'x-request-id': 'req-9', ...headers } });

describe('GraphQL client', () => {
  it('does not drop errors that come with data: the operation fails with all of them and the partial data', async () => {
    const { fetch } = fake([() => gqlJson(200, { data: { user: null }, errors: [{ message: 'boom', path: ['user'], extensions: { code: 'INTERNAL' } }] })]);
    const gql = createGraphqlClient({ baseUrl: 'http://x.test', fetch });
    const err = await gql.query('User', { id: 'u1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GraphqlRequestError);
    expect(err).toBeInstanceOf(OrderlineError);
    expect(err).toMatchObject({ status: 200, code: 'INTERNAL', requestId: 'req-9', source: 'graphql', data: { user: null }, errors: [{ message: 'boom', path: ['user'] }] });
  });

  it('sends the headers option and per-operation headers', async () => {
    const { fetch, seen } = fake([() => gqlJson(200, { data: { user: null } })]);
    const gql = createGraphqlClient({ baseUrl: 'http://x.test', fetch, headers: { 'x-app': 'shop' }, token: () => 'fresh' });
    await gql.query('User', { id: 'u1' }, { headers: { 'x-request-id': 'mine' } });
    expect([seen[0].headers.get('x-app'), seen[0].headers.get('x-request-id'), seen[0].headers.get('authorization')]).toEqual(['shop', 'mine', 'Bearer fresh']);
  });

  it("a token function that fails rejects the operation with its own error, once, before any request (as REST's client)", async () => {
    const { fetch, seen } = fake([() => gqlJson(200, { data: { user: null } })]);
    const refresh = new Error('refresh failed');
    let asked = 0;
    const token = () => {
      asked++;
      throw refresh;
    };
    const gql = createGraphqlClient({ baseUrl: 'http://x.test', fetch, token, maxDelayMs: 0 });
    await expect(gql.query('User', { id: 'u1' })).rejects.toBe(refresh);
    expect([asked, seen.length]).toEqual([1, 0]);
  });

  it('retries 429 THROTTLED after its Retry-After, then returns the data', async () => {
    const { fetch, seen } = fake([
      () => gqlJson(429, { errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED', retryAfterSeconds: 0 } }] }, { 'retry-after': '0' }),
      () => gqlJson(200, { data: { user: { id: 'u1', name: 'Ann' } } }),
    ]);
    const gql = createGraphqlClient({ baseUrl: 'http://x.test', fetch, maxDelayMs: 0 });
    expect(await gql.query('User', { id: 'u1' })).toEqual({ user: { id: 'u1', name: 'Ann' } });
    expect(seen).toHaveLength(2);
  });

  it('a 429 THROTTLED whose Retry-After is beyond maxDelayMs fails at once, saying when to retry', async () => {
    const { fetch, seen } = fake([() => gqlJson(429, { errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED' } }] }, { 'retry-after': '43' })]);
    const gql = createGraphqlClient({ baseUrl: 'http://x.test', fetch, maxDelayMs: 5000 });
    await expect(gql.query('User', { id: 'u1' })).rejects.toMatchObject({ status: 429, code: 'THROTTLED', retryAfterMs: 43000 });
    expect(seen).toHaveLength(1);
  });

  it('a 429 THROTTLED on every attempt is an OrderlineError with the code and when to retry', async () => {
    const { fetch } = fake([() => gqlJson(429, { errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED' } }] }, { 'retry-after': '7' })]);
    const gql = createGraphqlClient({ baseUrl: 'http://x.test', fetch, attempts: 1 });
    await expect(gql.query('User', { id: 'u1' })).rejects.toMatchObject({ status: 429, code: 'THROTTLED', retryAfterMs: 7000 });
  });

  it('passes a signal to fetch, and an aborted operation rejects with its reason', async () => {
    const controller = new AbortController();
    const { fetch, seen } = fake([() => Promise.reject(controller.signal.reason as Error)]);
    const gql = createGraphqlClient({ baseUrl: 'http://x.test', fetch });
    controller.abort();
    await expect(gql.query('User', { id: 'u1' }, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen[0].signal?.aborted).toBe(true);
    expect(seen).toHaveLength(1);
  });

  it('execute() on an insecure origin (no crypto.subtle) fails with INSECURE_CONTEXT, or uses options.sha256', async () => {
    const subtle = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(globalThis.crypto), 'subtle')!;
    const doc: TypedDocumentNode<{ user: { name: string } | null }, { id: string }> = parse('query Mine($id: ID!) { user(id: $id) { name } }');
    Object.defineProperty(globalThis.crypto, 'subtle', { value: undefined, configurable: true });
    try {
      const { fetch } = fake([() => gqlJson(200, { data: { user: { name: 'Ann' } } })]);
      await expect(createGraphqlClient({ baseUrl: 'http://x.test', fetch }).execute(doc, { id: 'u1' })).rejects.toMatchObject({ code: 'INSECURE_CONTEXT', status: 0 });
      const own = createGraphqlClient({ baseUrl: 'http://x.test', fetch, sha256: () => Promise.resolve('ab'.repeat(32)) });
      expect(await own.execute(doc, { id: 'u1' })).toEqual({ user: { name: 'Ann' } });
    } finally {
      delete (globalThis.crypto as { subtle?: unknown }).subtle;
      if (!globalThis.crypto.subtle) Object.defineProperty(Object.getPrototypeOf(globalThis.crypto), 'subtle', subtle);
    }
  });
});
