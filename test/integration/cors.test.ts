/**
 * CORS on the server (src/http/cors.ts): off by default; with CORS_ORIGINS, a listed
 * origin gets preflights for the conditional-request headers and can read the headers
 * a client needs (ETag above all), on successes, errors and SSE streams alike; any other
 * origin gets no CORS header at all, so the browser refuses.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseConfig } from '../../src/config';
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS } from '../../src/http/cors';
import { routes } from '../../generated/openapi/routes';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder } from '../support/streams';

const APP = 'http://app.example.test:5173';
const OTHER = 'http://evil.example.test';
const split = (v: string | null) => (v ?? '').split(',').map((s) => s.trim().toLowerCase());

describe('CORS', () => {
  describe('by default (no CORS_ORIGINS)', () => {
    let srv: TestServer;
    beforeAll(async () => {
      srv = await startTestServer();
    });
    afterAll(() => srv.close());

    it('answers no origin: no Access-Control-* header on a read or a preflight', async () => {
      const read = await srv.fetch('/v2/orders', { headers: { origin: APP } });
      expect(read.status).toBe(200);
      expect([...read.headers.keys()].filter((k) => k.startsWith('access-control-'))).toEqual([]);
      const pre = await srv.fetch('/v2/orders/1', { method: 'OPTIONS', as: 'anonymous', headers: { origin: APP, 'access-control-request-method': 'PATCH' } });
      expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    });
  });

  describe(`with CORS_ORIGINS=${APP}`, () => {
    let srv: TestServer;
    beforeAll(async () => {
      srv = await startTestServer({ CORS_ORIGINS: `${APP}, http://other-app.example.test` });
    });
    afterAll(() => srv.close());

    it('preflight allows the write and its conditional headers', async () => {
      const { id } = await createOrder(srv);
      const pre = await srv.fetch(`/v2/orders/${id}`, {
        method: 'OPTIONS',
        as: 'anonymous',
        headers: { origin: APP, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization, if-match, content-type' },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe(APP);
      // The path's own methods (its Allow, OPTIONS too), so the browser never sends what the path refuses 405.
      expect(split(pre.headers.get('access-control-allow-methods')).sort()).toEqual(['get', 'head', 'options', 'patch', 'put']);
      for (const [path, methods] of [
        ['/graphql', ['get', 'head', 'options', 'post']],
        ['/orders', ['get', 'head', 'options', 'post']],
      ] as const) {
        const other = await srv.fetch(path, { method: 'OPTIONS', as: 'anonymous', headers: { origin: APP, 'access-control-request-method': 'POST' } });
        expect({ path, methods: split(other.headers.get('access-control-allow-methods')).sort() }).toEqual({ path, methods });
      }
      expect(split(pre.headers.get('access-control-allow-headers'))).toEqual(expect.arrayContaining(['authorization', 'if-match', 'if-none-match', 'content-type', 'api-version']));
      expect(Number(pre.headers.get('access-control-max-age'))).toBeGreaterThan(0);
      expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
    });

    it('a preflight to a path nothing serves passes, another spelling of a contract path too, so the page reads the 404 itself', async () => {
      for (const path of ['/nowhere', '/ORDERS/1', '/orders/', '/graphql/', '/orders/1/cancel/']) {
        const pre = await srv.fetch(path, { method: 'OPTIONS', as: 'anonymous', headers: { origin: APP, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } });
        expect({ path, status: pre.status, origin: pre.headers.get('access-control-allow-origin') }).toEqual({ path, status: 204, origin: APP });
        const res = await srv.fetch(path, { headers: { origin: APP } });
        expect({ path, status: res.status, origin: res.headers.get('access-control-allow-origin') }).toEqual({ path, status: 404, origin: APP });
        expect(split(res.headers.get('access-control-expose-headers'))).toContain('x-request-id');
      }
    });

    it('exposes ETag, Location, Retry-After, Sunset, Deprecation, Link, Api-Version on responses, errors included', async () => {
      const created = await srv.fetch('/v2/orders', { method: 'POST', headers: { origin: APP, 'content-type': 'application/json' }, body: '{}' });
      const missing = await srv.fetch('/v2/orders/999999', { headers: { origin: APP } });
      expect([created.status, missing.status]).toEqual([201, 404]);
      for (const res of [created, missing]) {
        expect(res.headers.get('access-control-allow-origin')).toBe(APP);
        expect(split(res.headers.get('access-control-expose-headers'))).toEqual(expect.arrayContaining(['etag', 'location', 'retry-after', 'sunset', 'deprecation', 'link', 'api-version']));
        expect(split(res.headers.get('vary'))).toContain('origin');
      }
    });

    it('an SSE stream carries the CORS headers too', async () => {
      const { id } = await createOrder(srv);
      const abort = new AbortController();
      const res = await srv.fetch(`/api/orders/${id}/stream`, { headers: { origin: APP, accept: 'text/event-stream' }, signal: abort.signal });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(APP);
      abort.abort();
    });

    it('another origin gets no CORS header (the browser refuses), and the request changes nothing it could read', async () => {
      const read = await srv.fetch('/v2/orders', { headers: { origin: OTHER } });
      expect(read.headers.get('access-control-allow-origin')).toBeNull();
      const pre = await srv.fetch('/v2/orders/1', { method: 'OPTIONS', as: 'anonymous', headers: { origin: OTHER, 'access-control-request-method': 'PATCH' } });
      expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    });
  });

  describe('headers browser clients add on their own', () => {
    let srv: TestServer;
    beforeAll(async () => {
      srv = await startTestServer({ CORS_ORIGINS: APP, CORS_ALLOW_HEADERS: 'sentry-trace, baggage,Authorization' });
    });
    afterAll(() => srv.close());

    it("a preflight allows Apollo Client's client awareness and W3C Trace Context, and what CORS_ALLOW_HEADERS adds, once each", async () => {
      const pre = await srv.fetch('/graphql', {
        method: 'OPTIONS',
        as: 'anonymous',
        headers: { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'apollographql-client-name, apollographql-client-version, traceparent, tracestate, sentry-trace, baggage' },
      });
      expect(pre.status).toBe(204);
      const allowed = split(pre.headers.get('access-control-allow-headers'));
      for (const h of ['apollographql-client-name', 'apollographql-client-version', 'traceparent', 'tracestate', 'sentry-trace', 'baggage']) expect(allowed).toContain(h);
      expect(allowed.filter((h) => h === 'authorization')).toHaveLength(1);
    });

    it('CORS_ALLOW_HEADERS takes header names and refuses anything else by name', () => {
      expect(parseConfig({ CORS_ALLOW_HEADERS: ' x-a ,X-B,,x-b,AUTHORIZATION' })).toMatchObject({ ok: true, config: { corsAllowHeaders: ['x-a', 'X-B'] } });
      expect(parseConfig({})).toMatchObject({ ok: true, config: { corsAllowHeaders: [] } });
      for (const bad of ['a b', 'x:y', 'é', 'x(', '*', 'x-*']) expect(parseConfig({ CORS_ALLOW_HEADERS: bad })).toEqual({ ok: false, error: expect.stringContaining('CORS_ALLOW_HEADERS') });
    });
  });

  it('CORS_ORIGINS takes exact origins or *, and refuses anything else by name', () => {
    expect(parseConfig({ CORS_ORIGINS: `${APP},*` })).toMatchObject({ ok: true, config: { corsOrigins: [APP, '*'] } });
    expect(parseConfig({})).toMatchObject({ ok: true, config: { corsOrigins: [] } });
    for (const bad of ['app.example.test', `${APP}/`, `${APP}/path`, 'http://']) {
      expect(parseConfig({ CORS_ORIGINS: bad })).toEqual({ ok: false, error: expect.stringContaining('CORS_ORIGINS') });
    }
  });
});

const contractText = readFileSync(join(__dirname, '../../contracts/openapi.yaml'), 'utf8');

it('every request header a contract operation declares is one a preflight allows (a browser could not send it otherwise)', () => {
  // Safelisted names too: a safelisted header needs no leave only for some values (an `Accept` naming `version="1"` is not one).
  const allowed = new Set(CORS_ALLOW_HEADERS.map((h) => h.toLowerCase()));
  const missing = routes.flatMap((r) => r.headerNames.filter((h) => !allowed.has(h.toLowerCase())).map((h) => `${h} (${r.operationId})`));
  expect(missing).toEqual([]);
});

it('the contract documents the CORS policy the server applies (headers allowed and exposed)', () => {
  const line = contractText.split('\n').find((l) => l.includes('CORS (browser apps')) ?? '';
  for (const h of [...CORS_ALLOW_HEADERS, ...CORS_EXPOSE_HEADERS]) expect({ header: h, documented: line.includes(`\`${h}\``) }).toEqual({ header: h, documented: true });
  // The OPTIONS response's own header descriptions name the same lists, in order.
  const options = (parse(contractText) as { components: { responses: { Options: { headers: Record<string, { description: string }> } } } }).components.responses.Options.headers;
  expect(options['Access-Control-Allow-Headers'].description).toContain(`\`${CORS_ALLOW_HEADERS.join(',')}\``);
  expect(options['Access-Control-Expose-Headers'].description).toContain(`\`${CORS_EXPOSE_HEADERS.join(',')}\``);
});

it('a script on an allowed origin can read every response header the contract declares', () => {
  // Fetch standard: these are readable without being exposed; the Access-Control-* fields are the protocol itself.
  const safelisted = new Set(['cache-control', 'content-language', 'content-length', 'content-type', 'expires', 'last-modified', 'pragma']);
  const declared = new Set<string>();
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    const headers = (node as { headers?: unknown }).headers;
    if (typeof headers === 'object' && headers !== null && !Array.isArray(headers)) for (const name of Object.keys(headers)) declared.add(name);
    for (const value of Object.values(node)) visit(value);
  };
  const contract = parse(contractText) as { paths: unknown; components: { responses: unknown } };
  visit(contract.paths);
  visit(contract.components.responses);
  const exposed = new Set<string>(CORS_EXPOSE_HEADERS.map((h) => h.toLowerCase()));
  const unreadable = [...declared].filter((h) => !h.toLowerCase().startsWith('access-control-') && !safelisted.has(h.toLowerCase()) && !exposed.has(h.toLowerCase()));
  expect(unreadable).toEqual([]);
});
