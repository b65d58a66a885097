/**
 * How many CORS preflights a client on another origin pays, counted on the server (the
 * OPTIONS requests it answered), with the SDK in Chromium.
 *
 * Every SDK request is "non-simple": `Authorization` is on every call and is not a
 * CORS-safelisted request header, nor are `If-None-Match`, `If-Match` or the merge-patch
 * `Content-Type`, and PATCH is not a safelisted method. Chromium keeps a preflight's answer
 * for `Access-Control-Max-Age` (ours 600 s; Chromium caps it at 7200 s), keyed by origin and
 * **URL**, and reuses it only for a request that does not bypass the HTTP cache. A request
 * the page sends with `If-None-Match` or `If-Match` gets the Fetch standard's "no-store"
 * cache mode (HTTP-network-or-cache fetch: a conditional header set by the page), so it
 * never consults the preflight cache: each one pays a preflight, whatever max-age says.
 * Nothing in our answer causes it: the answer allows every header and method sent (the
 * requests succeed), and no response field can change a browser's cache mode.
 *
 * So: reads are cheap when the SDK leaves revalidation to the browser (`cacheSize: 0`): the
 * page sends a plain GET, the browser's HTTP cache adds If-None-Match on the wire itself
 * (the server still answers 304), and one preflight per URL serves them all. Writes must
 * carry If-Match (every write requires it), so each cross-origin write pays one preflight.
 */
import { createServer, type Server } from 'node:http';
import { type Browser, type Page } from 'playwright-core';
import { launchChromium, sdkBundle } from './chromium';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder } from '../support/streams';

const bundle = sdkBundle('index', 'orderline');

type Sdk = typeof import('@orderline/sdk');
type PageWindow = Window & { orderline: Sdk };

interface Counts {
  preflights: number;
  notModified: number;
}

/** Preflights (OPTIONS) and 304s the server answered so far: its request-duration histogram counts every answer. */
async function counts(srv: TestServer): Promise<Counts> {
  const lines = (await srv.metrics.registry.getSingleMetricAsString('orderline_http_request_duration_seconds')).split('\n').filter((l) => l.startsWith('orderline_http_request_duration_seconds_count{'));
  const sum = (match: string) => lines.filter((l) => l.includes(match)).reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  return { preflights: sum('method="OPTIONS"'), notModified: sum('method="GET",route="/v2/orders/{orderId}",status="304"') };
}

describe('CORS preflights paid by the SDK in a browser on another origin', () => {
  let pages: Server;
  let pagePort: number;
  let srv: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    pages = createServer((req, res) => {
      if (req.url === '/sdk.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client app</title><script src="/sdk.js"></script>');
    });
    await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
    pagePort = (pages.address() as { port: number }).port;
    srv = await startTestServer({ CORS_ORIGINS: `http://127.0.0.1:${pagePort}` });
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${pagePort}/`);
    await page.waitForFunction(() => 'orderline' in window);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await srv?.close();
    await new Promise((r) => pages?.close(r));
  });

  /** Runs `reads` GETs and `writes` PATCHes (If-Match) of one order from the page, with a new SDK client. */
  const run = (orderId: number, reads: number, writes: number, cacheSize?: number) =>
    page.evaluate(
      async ({ baseUrl, token, orderId, reads, writes, cacheSize }) => {
        const sdk = (window as unknown as PageWindow).orderline;
        const { api } = sdk.createOrderlineClient({ baseUrl, token, ...(cacheSize === undefined ? {} : { cacheSize }) });
        let etag = '';
        for (let i = 0; i < reads; i++) etag = (await api.GET('/v2/orders/{orderId}', { params: { path: { orderId } } })).response.headers.get('etag') ?? '';
        for (let i = 0; i < writes; i++) {
          const res = await api.PATCH('/v2/orders/{orderId}', { params: { path: { orderId }, header: { 'If-Match': etag } }, body: { note: `write ${i}` }, headers: { 'Content-Type': 'application/merge-patch+json' } });
          if (res.response.status !== 200) throw new Error(`PATCH: ${res.response.status}`);
          etag = res.response.headers.get('etag') ?? '';
        }
      },
      { baseUrl: srv.url, token: srv.alice.token, orderId, reads, writes, cacheSize },
    );

  /** What the server answered since `before`: preflights, and GETs answered 304. */
  async function since(before: Counts): Promise<Counts> {
    const now = await counts(srv);
    return { preflights: now.preflights - before.preflights, notModified: now.notModified - before.notModified };
  }

  it('reads with cacheSize 0: one preflight per URL, and the browser still revalidates (304s on the wire)', async () => {
    const a = await createOrder(srv);
    const before = await counts(srv);
    await run(a.id, 6, 0, 0);
    expect(await since(before)).toEqual({ preflights: 1, notModified: 5 });
    // Another order is another URL: its own preflight (the cache is keyed by URL; no field of ours widens it).
    const b = await createOrder(srv);
    const beforeB = await counts(srv);
    await run(b.id, 3, 0, 0);
    expect(await since(beforeB)).toEqual({ preflights: 1, notModified: 2 });
  }, 60_000);

  it("reads revalidated by the SDK's own cache (If-None-Match from the page): a preflight each", async () => {
    const { id } = await createOrder(srv);
    const before = await counts(srv);
    await run(id, 6, 0);
    // The first read (Authorization only) is preflighted once; each of the 5 revalidations again.
    expect(await since(before)).toEqual({ preflights: 6, notModified: 5 });
  }, 60_000);

  it('writes (PATCH with If-Match): a preflight each, whatever Access-Control-Max-Age says', async () => {
    const { id } = await createOrder(srv);
    await run(id, 1, 0, 0);
    const before = await counts(srv);
    await run(id, 1, 4, 0);
    expect((await since(before)).preflights).toBe(4);
  }, 60_000);
});
