/**
 * The SDK in Chromium on a page served from ANOTHER origin than the API, so CORS is
 * exercised for real: the page (http://127.0.0.1:<page port>) is in CORS_ORIGINS and its
 * SDK bundle reads (second read a 304 from the SDK's cache, which needs ETag exposed),
 * writes with If-Match through a real 412 (preflight for If-Match and the merge-patch
 * Content-Type) and streams over the browser's WebSocket and over SSE (fetch with
 * Authorization and Last-Event-ID: a preflight too). The same page served as
 * http://localhost:<page port>, an origin not listed, gets a clear CORS failure. The SDK's
 * GraphQL subscription runs over the browser's WebSocket on /graphql too (the token in
 * `connection_init`: a browser cannot set headers on a WebSocket) and resumes with `since`.
 * CHROMIUM_PATH overrides /usr/bin/chromium; .ci/run installs Debian's `chromium`.
 */
import { createServer, type Server } from 'node:http';
import { type Browser, type Page } from 'playwright-core';
import { launchChromium, sdkBundle } from './chromium';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, touch } from '../support/streams';

/** The whole SDK as one browser script (window.orderline), as a client app's bundler would include it. */
const bundle = sdkBundle('index', 'orderline');

type Sdk = typeof import('@orderline/sdk');
type PageWindow = Window & { orderline: Sdk; seqs: Record<string, number[]>; streams: { close(): void }[]; subscription?: { readonly lastSeq: number; close(): void } };

describe('the SDK in a browser page on another origin', () => {
  let pages: Server;
  let pagePort: number;
  let srv: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    pages = createServer((req, res) => {
      if (req.url === '/sdk.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client app</title><script src="/sdk.js"></script>');
    });
    await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
    pagePort = (pages.address() as { port: number }).port;
    // app.test: a plain-http origin that is not localhost, so the page is not a secure context (no crypto.randomUUID, no crypto.subtle).
    srv = await startTestServer({ CORS_ORIGINS: `http://127.0.0.1:${pagePort},http://app.test:${pagePort}` });
    browser = await launchChromium(['--host-resolver-rules=MAP app.test 127.0.0.1']);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await srv?.close();
    await new Promise((r) => pages?.close(r));
  });

  async function open(origin: string): Promise<{ page: Page; console: string[] }> {
    const page = await browser.newPage();
    const console: string[] = [];
    page.on('console', (m) => console.push(m.text()));
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => 'orderline' in window);
    return { page, console };
  }

  it('an allowed origin reads (304 from the cache), writes with If-Match through a 412, and streams over WS and SSE', async () => {
    const { page } = await open(`http://127.0.0.1:${pagePort}`);
    expect(new URL(page.url()).origin).not.toBe(new URL(srv.url).origin);
    const rest = await page.evaluate(
      async ({ baseUrl, token }) => {
        const sdk = (window as unknown as PageWindow).orderline;
        const statuses: number[] = [];
        let raced = false;
        // A competitor writes with the same If-Match just before the SDK's PATCH: a real 412.
        const racing: typeof fetch = async (input, init) => {
          const req = new Request(input, init);
          if (req.method === 'PATCH' && !raced) {
            raced = true;
            await fetch(req.url, {
              method: 'PATCH',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json', 'if-match': req.headers.get('if-match') ?? '' },
              body: '{"note":"theirs"}',
            });
          }
          const res = await fetch(req);
          statuses.push(res.status);
          return res;
        };
        const { api, cache } = sdk.createOrderlineClient({ baseUrl, token, fetch: racing });
        const created = await api.POST('/v2/orders', { body: { note: 'from the browser' } });
        const id = created.data!.id;
        const location = created.response.headers.get('location');
        const first = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: id } } });
        await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: id } } });
        const updated = await sdk.updateOrder(api, id, (o) => ({ note: `${o.note ?? ''}|ours` }));
        return { id, location, etag: first.response.headers.get('etag'), hits: cache.hits, statuses, note: updated.note };
      },
      { baseUrl: srv.url, token: srv.alice.token },
    );
    expect(rest.location).toBe(`/v2/orders/${rest.id}`);
    expect(rest.etag).toMatch(/^"/);
    expect(rest.hits).toBe(2); // the second read and updateOrder's first read: both 304s served from the cache
    // create, read, 304; updateOrder: its read (304, from the cache), PATCH 412, reread 200, PATCH 200.
    expect(rest.statuses).toEqual([201, 200, 304, 304, 412, 200, 200]);
    expect(rest.note).toBe('theirs|ours');

    const { id } = await createOrder(srv);
    await page.evaluate(
      ({ baseUrl, token, orderId }) => {
        const w = window as unknown as PageWindow;
        w.seqs = { ws: [], sse: [] };
        w.streams = (['ws', 'sse'] as const).map((transport) =>
          w.orderline.streamOrder({ baseUrl, token, orderId, transport, since: 1, backoff: { baseMs: 50, capMs: 500 }, onEvent: (m) => w.seqs[transport].push(m.seq) }),
        );
      },
      { baseUrl: srv.url, token: srv.alice.token, orderId: id },
    );
    await touch(srv, id, 2);
    await page.waitForFunction(() => Object.values((window as unknown as PageWindow).seqs).every((s) => s.length >= 2), undefined, { timeout: 15_000 });
    srv.realtime.dropConnections();
    await touch(srv, id, 2);
    await page.waitForFunction(() => Object.values((window as unknown as PageWindow).seqs).every((s) => s.length >= 4), undefined, { timeout: 15_000 });
    expect(await page.evaluate(() => (window as unknown as PageWindow).seqs)).toEqual({ ws: [2, 3, 4, 5], sse: [2, 3, 4, 5] });
    await page.evaluate(() => (window as unknown as PageWindow).streams.forEach((s) => s.close()));
    await page.close();
  }, 60_000);

  it("subscribes to an order's events over GraphQL from the page and resumes with since after the server cuts it", async () => {
    const { page } = await open(`http://127.0.0.1:${pagePort}`);
    const { id } = await createOrder(srv);
    await page.evaluate(
      ({ baseUrl, token, orderId }) => {
        const w = window as unknown as PageWindow;
        w.seqs = { gql: [] };
        const gql = w.orderline.createGraphqlClient({ baseUrl, token, backoff: { baseMs: 50, capMs: 500 } }); // the browser's own WebSocket
        w.subscription = gql.subscribe('OrderEvents', { id: String(orderId) }, { next: (d) => w.seqs.gql.push(d.orderEvents.seq) });
      },
      { baseUrl: srv.url, token: srv.alice.token, orderId: id },
    );
    await page.waitForFunction(() => (window as unknown as PageWindow).subscription?.lastSeq === 1, undefined, { timeout: 15_000 });
    await touch(srv, id, 2);
    await page.waitForFunction(() => (window as unknown as PageWindow).seqs.gql.length >= 2, undefined, { timeout: 15_000 });
    srv.realtime.dropConnections();
    await touch(srv, id, 2);
    await page.waitForFunction(() => (window as unknown as PageWindow).seqs.gql.length >= 4, undefined, { timeout: 15_000 });
    expect(await page.evaluate(() => (window as unknown as PageWindow).seqs.gql)).toEqual([2, 3, 4, 5]);
    await page.evaluate(() => (window as unknown as PageWindow).subscription?.close());
    await page.close();
  }, 60_000);

  it('an origin not in CORS_ORIGINS gets a clear CORS failure, and its write changes nothing', async () => {
    const { id, etag } = await createOrder(srv);
    const { page, console } = await open(`http://localhost:${pagePort}`);
    const outcome = await page.evaluate(
      async ({ baseUrl, token, orderId, etag }) => {
        const { api } = (window as unknown as PageWindow).orderline.createOrderlineClient({ baseUrl, token });
        const tries: string[] = [];
        for (const call of [
          () => api.GET('/v2/orders/{orderId}', { params: { path: { orderId } } }),
          () => api.PATCH('/v2/orders/{orderId}', { params: { path: { orderId }, header: { 'If-Match': etag } }, body: { note: 'blocked' } }),
        ]) {
          try {
            await call();
            tries.push('resolved');
          } catch (err) {
            tries.push(`${(err as Error).name}: ${(err as Error).message}`);
          }
        }
        return tries;
      },
      { baseUrl: srv.url, token: srv.alice.token, orderId: id, etag },
    );
    // No answer a script may read: the one error type, NETWORK_ERROR (after the retries a GET and an If-Match write get).
    expect(outcome).toEqual(['OrderlineError: NETWORK_ERROR: Failed to fetch', 'OrderlineError: NETWORK_ERROR: Failed to fetch']);
    expect(console.some((m) => m.includes(`from origin 'http://localhost:${pagePort}' has been blocked by CORS policy`))).toBe(true);
    const after = await srv.fetch(`/v2/orders/${id}`);
    expect(((await after.json()) as { note: string | null }).note).toBeNull();
    await page.close();
  }, 60_000);

  it('on a plain-http origin other than localhost (not a secure context): a create gets its Idempotency-Key, query() runs, execute() says INSECURE_CONTEXT; errors carry the request id', async () => {
    const { page } = await open(`http://app.test:${pagePort}`);
    const outcome = await page.evaluate(
      async ({ baseUrl, token }) => {
        const sdk = (window as unknown as PageWindow).orderline;
        const keys: (string | null)[] = [];
        const keyed: typeof fetch = (input, init) => {
          const req = new Request(input, init);
          if (req.method === 'POST') keys.push(req.headers.get('idempotency-key'));
          return fetch(req);
        };
        const { api } = sdk.createOrderlineClient({ baseUrl, token, fetch: keyed });
        const created = await sdk.unwrap(api.POST('/v2/orders', { body: { note: 'insecure origin' } }));
        const gql = sdk.createGraphqlClient({ baseUrl, token });
        const byName = await gql.query('Order', { id: String(created.id) });
        // A client's own document (what graphql's parse returns), run with execute(): it needs crypto.subtle to hash.
        const doc = {
          kind: 'Document',
          definitions: [
            {
              kind: 'OperationDefinition',
              operation: 'query',
              name: { kind: 'Name', value: 'Mine' },
              selectionSet: {
                kind: 'SelectionSet',
                selections: [{ kind: 'Field', name: { kind: 'Name', value: 'viewer' }, selectionSet: { kind: 'SelectionSet', selections: [{ kind: 'Field', name: { kind: 'Name', value: 'id' } }] } }],
              },
            },
          ],
        };
        const own = await gql.execute(doc as never, {}).then(
          () => 'ran',
          (err: { code?: string }) => err.code,
        );
        const missing = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 999_999_999 } } }).then(
          () => undefined,
          (err: { status: number; code: string; requestId?: string }) => ({ status: err.status, code: err.code, requestId: typeof err.requestId }),
        );
        return { secure: window.isSecureContext, hasRandomUUID: typeof crypto.randomUUID, status: created.status, keys, order: byName.order?.id === String(created.id), own, missing };
      },
      { baseUrl: srv.url, token: srv.alice.token },
    );
    expect(outcome).toMatchObject({ secure: false, hasRandomUUID: 'undefined', status: 'pending', order: true, own: 'INSECURE_CONTEXT', missing: { status: 404, code: 'NOT_FOUND', requestId: 'string' } });
    expect(outcome.keys).toHaveLength(1);
    expect(outcome.keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    await page.close();
  }, 60_000);
});
