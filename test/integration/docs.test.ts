/**
 * The contracts are served as they are (GET /openapi.yaml, /openapi.json, /asyncapi.yaml,
 * /schema.graphql) and the reference pages (/docs, /docs/realtime, /docs/graphql, and the
 * SDK's, /docs/sdk) link them; all of it publicly cacheable with a strong ETag and 304 on
 * revalidation.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Parser, type Diagnostic } from '@asyncapi/parser';
import { buildSchema } from 'graphql';
import YAML from 'yaml';
import * as sdk from '@orderline/sdk';
import { startTestServer, type TestServer } from '../support/server';

const contract = (name: string) => readFileSync(join(__dirname, '../../contracts', name), 'utf8');

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await s.fetch(path, { as: 'anonymous', headers });
  return { res, text: await res.text() };
}

/** Every file: public five-minute caching, a strong ETag, and 304 (no body, same headers) when it matches. */
async function expectRevalidates(path: string) {
  const { res } = await get(path);
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('public, max-age=300');
  const etag = res.headers.get('etag')!;
  expect(etag).toMatch(/^"[^"]+"$/);
  for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
    const again = await get(path, { 'if-none-match': ifNoneMatch });
    expect({ ifNoneMatch, status: again.res.status, body: again.text }).toEqual({ ifNoneMatch, status: 304, body: '' });
    expect(again.res.headers.get('etag')).toBe(etag);
    expect(again.res.headers.get('cache-control')).toBe('public, max-age=300');
  }
  expect((await get(path, { 'if-none-match': '"stale"' })).res.status).toBe(200);
}

describe('the contracts, served as they are', () => {
  it('GET /openapi.yaml is contracts/openapi.yaml byte for byte, and parses as OpenAPI 3.1', async () => {
    const { res, text } = await get('/openapi.yaml');
    expect(res.headers.get('content-type')).toBe('application/yaml');
    expect(text).toBe(contract('openapi.yaml'));
    const doc = YAML.parse(text);
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.paths['/v2/orders/{orderId}'].get.operationId).toBe('getOrderV2');
    await expectRevalidates('/openapi.yaml');
  });

  it('GET /openapi.json is the same document as JSON', async () => {
    const { res, text } = await get('/openapi.json');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(text)).toEqual(YAML.parse(contract('openapi.yaml')));
    await expectRevalidates('/openapi.json');
  });

  it('GET /schema.graphql is contracts/schema.graphql byte for byte, and builds a schema', async () => {
    const { res, text } = await get('/schema.graphql');
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(text).toBe(contract('schema.graphql'));
    expect(buildSchema(text).getType('User')).toBeDefined();
    await expectRevalidates('/schema.graphql');
  });
});

describe('the reference pages', () => {
  it.each(['/docs', '/docs/realtime', '/docs/graphql'])('%s links the four pages (the SDK reference too) and the four contracts, and loads Redoc from this service only', async (path) => {
    const { res, text } = await get(path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html');
    for (const href of ['/docs', '/docs/realtime', '/docs/graphql', '/docs/sdk', '/openapi.yaml', '/openapi.json', '/asyncapi.yaml', '/schema.graphql']) {
      expect(text).toContain(`href="${href}"`);
    }
    expect(text).toContain('import { hydrate } from "/docs/redoc.standalone.js"');
    // Nothing is loaded from another origin: no script or stylesheet, and a CSP that refuses the rest.
    expect(text).not.toMatch(/<(script|link)\b[^>]*\b(src|href)="(https?:)?\/\//);
    expect(text).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'self';`);
    await expectRevalidates(path);
  });

  it('/docs/sdk: the SDK reference, one page with no script, linking the other pages and the contracts', async () => {
    const { res, text } = await get('/docs/sdk');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html');
    for (const href of ['/docs', '/docs/realtime', '/docs/graphql', '/openapi.yaml', '/openapi.json', '/asyncapi.yaml', '/schema.graphql']) {
      expect(text).toContain(`href="${href}"`);
    }
    expect(text).toContain('<a href="/docs/sdk" aria-current="page">SDK</a>');
    expect(text).not.toMatch(/<script\b/);
    expect(text).not.toMatch(/<(link|img)\b[^>]*\b(src|href)="(?!data:)/);
    expect(text).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none';`);
    await expectRevalidates('/docs/sdk');
  });

  it('/docs/sdk documents the entry points and every runtime export of @orderline/sdk, with signatures', async () => {
    const { text } = await get('/docs/sdk');
    const shown = text
      .replace(/<[^>]*>/g, '')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&');
    for (const signature of [
      'createRestClient(options: RestClientOptions): RestClient',
      'createOrderlineClient(options: OrderlineClientOptions): { api: RestClient; cache: EtagCache }',
      'createGraphqlClient(options: GraphqlClientOptions): GraphqlClient',
      'streamOrder(opts: OrderStreamOptions): OrderStream',
      'updateOrder(api: RestClient, orderId: number, change: (current: Order) => OrderPatch | null, options?: UpdateOrderOptions): Promise<Order>',
      'class OrderlineError extends Error',
      'interface RestClientOptions',
    ]) {
      expect(shown).toContain(signature);
    }
    for (const entry of ['@orderline/sdk', '@orderline/sdk/rest', '@orderline/sdk/graphql', '@orderline/sdk/realtime']) expect(text).toContain(`>${entry}</a></h2>`);
    const ids = new Set([...text.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]));
    for (const name of Object.keys(sdk)) expect({ name, documented: ids.has(name) }).toEqual({ name, documented: true });
    // Every link within the page lands on an anchor of the page.
    for (const [, fragment] of text.matchAll(/ href="#([^"]*)"/g)) expect(ids).toContain(decodeURI(fragment));
  });

  it('titles each page after the service and what it documents (a tab or a bookmark says which)', async () => {
    const titles: Record<string, string> = {};
    for (const path of ['/docs', '/docs/realtime', '/docs/graphql', '/docs/sdk']) titles[path] = /<title>([^<]*)<\/title>/.exec((await get(path)).text)?.[1] ?? '';
    expect(titles).toEqual({ '/docs': 'orderline REST API', '/docs/realtime': 'orderline realtime', '/docs/graphql': 'orderline GraphQL API', '/docs/sdk': '@orderline/sdk API reference' });
  });

  it('serves the Redoc bundle the pages import', async () => {
    const { res, text } = await get('/docs/redoc.standalone.js');
    expect(res.headers.get('content-type')).toBe('text/javascript');
    expect(text).toContain('export{RedocStandalone,hydrate,init}');
    await expectRevalidates('/docs/redoc.standalone.js');
  });

  it('renders the contracts as they are now (the REST page embeds the current openapi.yaml)', async () => {
    const { text } = await get('/docs');
    const embedded = /const __redoc_definition = (\{.*\});\n/.exec(text);
    expect(embedded).not.toBeNull();
    expect(JSON.parse(embedded![1])).toEqual(YAML.parse(contract('openapi.yaml')));
  });
});

describe('the realtime contract', () => {
  it('GET /asyncapi.yaml is contracts/asyncapi.yaml byte for byte, and the AsyncAPI parser accepts it as served', async () => {
    const { res, text } = await get('/asyncapi.yaml');
    expect(res.headers.get('content-type')).toBe('application/yaml');
    expect(text).toBe(contract('asyncapi.yaml'));
    await expectRevalidates('/asyncapi.yaml');
    // Its payloads $ref `./openapi.yaml#/...`: resolved against the served URL, i.e. GET /openapi.yaml.
    // Last in this file: the parser's validation holds the event loop for seconds, and a request
    // right after it could meet a keep-alive socket the (in-process) server has just closed.
    const { document, diagnostics } = await new Parser().parse(text, { source: `${s.url}/asyncapi.yaml` });
    const SEVERITY_ERROR: Diagnostic['severity'] = 0; // DiagnosticSeverity.Error, in the enum the diagnostics carry
    expect(diagnostics.filter((d) => d.severity === SEVERITY_ERROR)).toEqual([]);
    expect(document?.channels().all().length).toBeGreaterThan(0);
  });
});
