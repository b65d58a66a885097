/**
 * What only a browser can show, in Debian's Chromium driven by playwright-core:
 * - a page's own EventSource resumes by itself with Last-Event-ID after the server drops
 *   the stream, and gets exactly the events it missed;
 * - the SDK's realtime client (bundled for the browser with esbuild) works in a page
 *   over the browser's WebSocket, across a server-side drop.
 * The page is the service's /docs, so streams are same-origin (no CORS involved).
 * CHROMIUM_PATH overrides /usr/bin/chromium; .ci/run installs Debian's `chromium`.
 */
import { type Browser, type Page } from 'playwright-core';
import { launchChromium, sdkBundle } from './chromium';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, touch } from '../support/streams';

describe('in Chromium', () => {
  let srv: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    srv = await startTestServer({ REPLAY_RATE: '10', REPLAY_WINDOW_S: '60' });
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(`${srv.url}/docs`);
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await srv?.close();
  });

  const seqsInPage = (name: string) => page.evaluate((n) => (window as unknown as Record<string, number[]>)[n], name);

  async function waitForSeqs(name: string, count: number, ms = 10_000): Promise<number[]> {
    const deadline = Date.now() + ms;
    for (;;) {
      const seqs = (await seqsInPage(name)) ?? [];
      if (seqs.length >= count || Date.now() > deadline) return seqs;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('EventSource resumes by itself with Last-Event-ID after the server drops it', async () => {
    const { id } = await createOrder(srv);
    await page.evaluate(
      ({ url }) => {
        const w = window as unknown as Record<string, unknown>;
        w.esSeqs = [];
        w.esOpens = 0;
        const es = new EventSource(url);
        es.onopen = () => (w.esOpens as number)++;
        es.addEventListener('order.updated', (e) => (w.esSeqs as number[]).push(Number(e.lastEventId)));
      },
      { url: `/api/orders/${id}/stream?access_token=${srv.alice.token}` },
    );
    await page.waitForFunction(() => (window as unknown as { esOpens: number }).esOpens === 1);
    await touch(srv, id, 2); // 2, 3
    expect(await waitForSeqs('esSeqs', 2)).toEqual([2, 3]);
    srv.realtime.dropConnections(); // the browser reconnects after `retry:` with Last-Event-ID: 3
    await touch(srv, id, 3); // 4, 5, 6 while it is away
    expect(await waitForSeqs('esSeqs', 5)).toEqual([2, 3, 4, 5, 6]);
    expect(await page.evaluate(() => (window as unknown as { esOpens: number }).esOpens)).toBe(2);
  }, 30_000);

  it("the SDK's WebSocket client works in the page, across a drop", async () => {
    const { id } = await createOrder(srv);
    await page.addScriptTag({ content: sdkBundle('realtime', 'orderlineRealtime') });
    await page.evaluate(
      ({ baseUrl, token, orderId }) => {
        const w = window as unknown as Record<string, unknown> & { orderlineRealtime: typeof import('@orderline/sdk/realtime') };
        w.sdkSeqs = [];
        w.sdkStream = w.orderlineRealtime.streamOrder({
          baseUrl,
          token,
          orderId,
          transport: 'ws',
          since: 1,
          backoff: { baseMs: 50, capMs: 500 },
          onEvent: (m) => (w.sdkSeqs as number[]).push(m.seq),
        });
      },
      { baseUrl: srv.url, token: srv.alice.token, orderId: id },
    );
    await touch(srv, id, 2);
    expect(await waitForSeqs('sdkSeqs', 2)).toEqual([2, 3]);
    srv.realtime.dropConnections();
    await touch(srv, id, 2);
    expect(await waitForSeqs('sdkSeqs', 4)).toEqual([2, 3, 4, 5]);
    await page.evaluate(() => (window as unknown as { sdkStream: { close(): void } }).sdkStream.close());
  }, 30_000);
});
