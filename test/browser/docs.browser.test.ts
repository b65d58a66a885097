/**
 * The API reference as a reader sees it, in Debian's Chromium driven by playwright-core:
 * /docs (REST), then through its navigation the realtime and GraphQL pages, each rendered
 * by Redoc in the page (hydrated from the prerendered HTML codegen wrote), and the SDK's
 * page (plain HTML, no script). What is looked for is read from the contracts (and the
 * SDK's exports), so the test follows them.
 * Screenshots go to test-artifacts/docs/ (gitignored): what the reference looked like.
 * CHROMIUM_PATH overrides /usr/bin/chromium; .ci/run installs Debian's `chromium`.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type Page } from 'playwright-core';
import { buildSchema, type GraphQLObjectType } from 'graphql';
import YAML from 'yaml';
import { launchChromium } from './chromium';
import { startTestServer, type TestServer } from '../support/server';

const ROOT = join(__dirname, '../..');
const ARTIFACTS = join(ROOT, 'test-artifacts/docs');
const openapi = YAML.parse(readFileSync(join(ROOT, 'contracts/openapi.yaml'), 'utf8'));
const asyncapi = YAML.parse(readFileSync(join(ROOT, 'contracts/asyncapi.yaml'), 'utf8'));
const schema = buildSchema(readFileSync(join(ROOT, 'contracts/schema.graphql'), 'utf8'));

/**
 * The row Redoc renders for one field or parameter, found by the deep link Redoc gives it
 * (`href` ends with `suffix`, e.g. `getorderv2/t=response&c=200&ct=application/json&path=total_cents`):
 * the smallest block around that link, at most five levels up, that shows both `name` and `text`.
 */
const rowShows = (page: Page, suffix: string, name: string, text: string) =>
  page
    .locator(`a[href$="${suffix}"]`)
    .first()
    .evaluate(
      (el, [n, t]) => {
        let node: HTMLElement | null = el as HTMLElement;
        for (let up = 0; node && up <= 5; up++, node = node.parentElement) if (node.innerText.includes(n) && node.innerText.includes(t)) return true;
        return false;
      },
      [name, text],
    );

describe('the API reference in Chromium', () => {
  let srv: TestServer;
  let browser: Browser;
  let page: Page;
  const foreign: { url: string; failure: string | undefined }[] = [];
  const foreignResponses: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    srv = await startTestServer();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const own = (url: string) => url.startsWith(srv.url) || url.startsWith('blob:') || url.startsWith('data:');
    page.on('requestfailed', (r) => {
      if (!own(r.url())) foreign.push({ url: r.url(), failure: r.failure()?.errorText });
    });
    page.on('response', (r) => {
      if (!own(r.url())) foreignResponses.push(r.url());
    });
  }, 30_000);
  // Every page loads nothing from another origin: what Redoc tries (its attribution logo)
  // is refused by the page's CSP before it leaves the browser.
  afterEach(() => {
    expect(foreignResponses.splice(0)).toEqual([]);
    expect(foreign.splice(0).filter((r) => r.failure !== 'csp')).toEqual([]);
  });
  afterAll(async () => {
    await browser?.close();
    await srv?.close();
  });

  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });

  it('/docs: the operation getOrderV2, the field total_cents with its description, the If-Match header', async () => {
    await page.goto(`${srv.url}/docs`);
    await page.getByRole('navigation', { name: 'orderline API reference' }).waitFor();
    // Redoc routes each operation by its operationId: the sidebar's link to getOrderV2.
    await page
      .locator('[data-component-name="Menu/MenuItem"]', { hasText: /^orders$/ })
      .first()
      .click();
    const menuLink = page.locator('a[href="#/orders/getorderv2"]').first();
    await menuLink.click();
    await page.waitForURL(/#\/orders\/getorderv2$/);
    const getOrderV2 = openapi.paths['/v2/orders/{orderId}'].get;
    expect(getOrderV2.operationId).toBe('getOrderV2');
    await page.getByText(getOrderV2.summary, { exact: true }).first().waitFor();
    await page.getByText('/v2/orders/{orderId}', { exact: true }).first().waitFor();

    const description: string = openapi.components.schemas.OrderV2.properties.total_cents.description;
    expect(description.length).toBeGreaterThan(10);
    const totalCents = 'getorderv2/t=response&c=200&ct=application/json&path=total_cents';
    await page.locator(`a[href$="${totalCents}"]`).first().scrollIntoViewIfNeeded();
    expect(await rowShows(page, totalCents, 'total_cents', description)).toBe(true);
    await shot('rest-getOrderV2');

    await page.goto(`${srv.url}/docs#/orders/patchorderv2`);
    const ifMatch = 'patchorderv2/t=request&in=headers&path=if-match';
    await page.locator(`a[href$="${ifMatch}"]`).first().scrollIntoViewIfNeeded();
    // Redoc renders the description's markdown: `*` is shown as code, without the backticks.
    expect(await rowShows(page, ifMatch, 'If-Match', openapi.components.parameters.IfMatch.description.replace(/`/g, ''))).toBe(true);
    await shot('rest-patchOrderV2-If-Match');
  }, 60_000);

  it("the deprecation Link of version 1 lands on the contract's Versioning section", async () => {
    const v1 = await srv.fetch('/v1/orders');
    const target = /<([^>]+)>; rel="deprecation"/.exec(v1.headers.get('link') ?? '')?.[1];
    expect(target).toBeDefined();
    await page.goto('about:blank'); // a fresh load: the link is followed from elsewhere
    await page.goto(`${srv.url}${target}`);
    await page.waitForFunction(() => {
      const h = [...document.querySelectorAll('h1, h2')].find((e) => e.textContent?.trim() === 'Versioning');
      return h !== undefined && h.getBoundingClientRect().top < 300;
    });
    expect(await page.getByText('Version 1 sunsets on', { exact: false }).first().isVisible()).toBe(true);
  }, 30_000);

  it('the realtime page (from the navigation): the WebSocket subscribe message and its payload', async () => {
    await page.goto(`${srv.url}/docs`);
    await page
      .getByRole('navigation', { name: 'orderline API reference' })
      .getByRole('link', { name: /^Realtime/ })
      .click();
    await page.waitForURL(`${srv.url}/docs/realtime`);
    const subscribe = asyncapi.components.messages.SubscribeMessage;
    const send = asyncapi.operations.sendSubscription;
    await page.locator('[data-component-name="Menu/MenuItem"]', { hasText: asyncapi.channels.orders.title }).first().click();
    await page.locator('a[href="#/channels/orders/operations/sendsubscription"]').first().click();
    await page.getByText(send.title, { exact: true }).first().waitFor();
    const message = page.getByText(subscribe.title, { exact: true }).first();
    await message.waitFor();
    await shot('realtime-sendSubscription');
    // The channel's page lists the message with its summary and payload (AsyncAPI summaries are plain text).
    await page.getByText(subscribe.summary, { exact: true }).first().waitFor();
    const since = 'm=subscribe&t=payload&path=since';
    await page.locator(`a[href$="${since}"]`).first().scrollIntoViewIfNeeded();
    expect(await rowShows(page, since, 'since', asyncapi.components.schemas.Seq.description)).toBe(true);
    await shot('realtime-subscribe');
  }, 60_000);

  it('the GraphQL page (from the navigation): type User with friends(first:)', async () => {
    await page.getByRole('navigation', { name: 'orderline API reference' }).getByRole('link', { name: 'GraphQL', exact: true }).click();
    await page.waitForURL(`${srv.url}/docs/graphql`);
    await page
      .locator('[data-component-name="Menu/MenuItem"]', { hasText: /^Objects$/ })
      .first()
      .click();
    await page.locator('a[href="#/objects/user"]').first().click();
    await page.waitForURL(/#\/objects\/user$/);
    const friends = 'objects/user/t=field&path=user.friends';
    await page.locator(`a[href$="${friends}"]`).first().waitFor();
    const friendsDoc = ((schema.getType('User') as GraphQLObjectType).getFields().friends.description ?? '').replace(/`/g, '');
    expect(friendsDoc).not.toBe('');
    expect(await rowShows(page, friends, 'friends', friendsDoc)).toBe(true);
    // Its argument: "Show arguments" in the friends row, then `first` with its type.
    await page
      .locator(`a[href$="${friends}"]`)
      .first()
      .evaluate((a) => {
        let node: HTMLElement | null = a as HTMLElement;
        for (let up = 0; node && up <= 6; up++, node = node.parentElement) {
          const button = [...node.querySelectorAll<HTMLElement>('*')].find((e) => e.childElementCount === 0 && e.textContent === 'Show arguments');
          if (button) return button.click();
        }
        throw new Error('no "Show arguments" beside friends');
      });
    await page.getByText('Hide arguments').first().waitFor();
    expect(await rowShows(page, friends, 'first', 'Int')).toBe(true);
    await shot('graphql-User');
  }, 60_000);

  it('the SDK page (from the navigation): createRestClient from its table of contents, and back to REST', async () => {
    await page.goto(`${srv.url}/docs`);
    await page.getByRole('navigation', { name: 'orderline API reference' }).getByRole('link', { name: 'SDK', exact: true }).click();
    await page.waitForURL(`${srv.url}/docs/sdk`);
    await page.getByRole('heading', { name: '@orderline/sdk/rest' }).waitFor();
    await page.getByRole('navigation', { name: 'Contents' }).getByRole('link', { name: 'createRestClient', exact: true }).click();
    await page.waitForURL(/#createRestClient$/);
    const section = page.locator('section#createRestClient');
    expect(await section.locator('pre.signature').first().innerText()).toBe('createRestClient(options: RestClientOptions): RestClient');
    expect(await section.evaluate((el) => el.getBoundingClientRect().top)).toBeLessThan(100);
    await shot('sdk-createRestClient');
    // A type in a signature links to its own section.
    await section.getByRole('link', { name: 'RestClientOptions' }).click();
    await page.waitForURL(/#RestClientOptions$/);
    await page.locator('dt#RestClientOptions\\.baseUrl').waitFor();
    await page.getByRole('navigation', { name: 'orderline API reference' }).getByRole('link', { name: 'REST', exact: true }).click();
    await page.waitForURL(`${srv.url}/docs`);
  }, 60_000);
});
