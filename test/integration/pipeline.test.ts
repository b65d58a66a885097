/**
 * The request pipeline (src/http/pipeline.ts) from outside: every route the contracts
 * declare answers OPTIONS, 405 and HEAD by one rule, owns its URL exactly, and what the
 * contracts do not declare reaches the Koa application, where a user's own middleware and
 * @koa/router routes get the same request id, CORS, problem+json, log line and metric.
 */
import fc from 'fast-check';
import Router from '@koa/router';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import YAML from 'yaml';
import { extend } from '../../examples/extend';
import { startTestServer, type TestServer } from '../support/server';
import { DEFAULT_BODY_LIMIT } from '../../src/http';
import { createOrder } from '../support/streams';
import { routes } from '../../generated/openapi/routes';

const APP = 'http://app.example.test';

describe('the request pipeline', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({ CORS_ORIGINS: APP });
    // What a user adds to the service: the README's example (a middleware and a router), and a route with a bug.
    extend(srv.app);
    const buggy = new Router();
    buggy.get('/boom', () => {
      throw new Error('a bug in a user route');
    });
    // Error statuses a user's route throws or sets, and a route that would shadow contract URLs.
    buggy.get('/thrown/:status', (ctx) => ctx.throw(Number(ctx.params.status), 'refused here'));
    buggy.get('/plain/:status', (ctx) => void (ctx.status = Number(ctx.params.status)));
    buggy.all('/orders/:id', (ctx) => void (ctx.body = { shadow: true }));
    // A route that reads the body itself, from the raw request.
    buggy.post('/echo', async (ctx) => {
      let bytes = 0;
      for await (const chunk of ctx.req) bytes += (chunk as Buffer).length;
      ctx.body = { bytes };
    });
    srv.app.use(buggy.routes());
  });

  it('the README shows examples/extend.ts as it is', () => {
    const readme = readFileSync(join(__dirname, '../../README.md'), 'utf8');
    expect(readme).toContain(`\`\`\`typescript\n${readFileSync(join(__dirname, '../../examples/extend.ts'), 'utf8')}\`\`\``);
    // The line it tells you to change in src/main.ts: that file's, with `app` taken too, so pasting it compiles.
    const line = /\nand in `src\/main\.ts`[\s\S]*?```typescript\n(const \{ app, [^\n]*)\n/.exec(readme)?.[1];
    expect(line).toBeDefined();
    // A team that followed the README has the line with `app` in main.ts: both pass.
    const main = readFileSync(join(__dirname, '../../src/main.ts'), 'utf8');
    expect([line!, line!.replace('{ app, ', '{ ')].some((l) => main.includes(l))).toBe(true);
  });
  afterAll(() => srv.close());

  it('serves a user route behind the Koa shell: request id, CORS and the metric by route template', async () => {
    const res = await srv.fetch('/hello/ada', { headers: { origin: APP, 'x-request-id': 'req-42' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ hello: 'ada', requestId: 'req-42' });
    expect(res.headers.get('x-request-id')).toBe('req-42');
    expect(res.headers.get('x-powered-by')).toBe('orderline');
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    expect(res.headers.get('vary')).toContain('Origin');
    const metrics = await srv.metrics.registry.metrics();
    expect(metrics).toMatch(/orderline_http_request_duration_seconds_count\{method="GET",route="\/hello\/:name",status="200"\} 1/);
  });

  it('answers what no route serves with the same problem+json: 404, 405 with Allow, 500 without internals', async () => {
    const missing = await srv.fetch('/nowhere');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/problem+json');
    expect(await missing.json()).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    const wrong = await srv.fetch('/hello/ada', { method: 'POST' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toMatch(/GET.*OPTIONS/); // OPTIONS too, as on a contract path
    expect(await wrong.json()).toMatchObject({ code: 'METHOD_NOT_ALLOWED' });
    // Counted under the route whose path matched, as a 405 on a contract path is.
    expect(await srv.metrics.registry.metrics()).toMatch(/orderline_http_request_duration_seconds_count\{method="POST",route="\/hello\/:name",status="405"\} 1/);
    const boom = await srv.fetch('/boom');
    expect(boom.status).toBe(500);
    const body = (await boom.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ code: 'INTERNAL' });
    expect(JSON.stringify(body)).not.toContain('a bug');
  });

  it("a HEAD of a path no route serves answers its GET's fields, Content-Length included, on Koa's 404 and on a contract path's near miss (generated)", async () => {
    const paths = fc.oneof(fc.stringMatching(/^\/[a-z]{1,12}$/), fc.constantFrom('/orders/', '/Orders', '/healthz/'));
    await fc.assert(
      fc.asyncProperty(paths, async (path) => {
        const [get, head] = [await srv.fetch(path, { as: 'anonymous' }), await srv.fetch(path, { as: 'anonymous', method: 'HEAD' })];
        if (get.status !== 404) return; // a path a user route or the contract serves
        expect(head.status).toBe(404);
        expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
      }),
      { numRuns: 30 },
    );
  });

  it("a HEAD where GET is not allowed (405) answers its GET's fields, Content-Length included (generated)", async () => {
    const paths = fc.tuple(fc.constantFrom('/orders/{id}/cancel', '/v1/orders/{id}/cancel', '/v2/orders/{id}/cancel'), fc.nat()).map(([t, id]) => t.replace('{id}', String(id)));
    await fc.assert(
      fc.asyncProperty(paths, fc.constantFrom<('alice' | 'anonymous')[]>('alice', 'anonymous'), async (path, as) => {
        const [get, head] = [await srv.fetch(path, { as }), await srv.fetch(path, { as, method: 'HEAD' })];
        expect([get.status, head.status]).toEqual([405, 405]);
        expect(head.headers.get('allow')).toBe(get.headers.get('allow'));
        expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
      }),
      { numRuns: 20 },
    );
  });

  it('names the user route that a contract path shadows, as the start-up warning does', () => {
    expect(srv.unreachableRoutes()).toEqual([{ methods: '*', path: '/orders/:id', owner: '/orders/{orderId}' }]);
  });

  it('answers every error status a user route throws or sets as problem+json with that status, never a 500', async () => {
    const codes: Record<number, string> = {
      401: 'UNAUTHORIZED',
      403: 'FORBIDDEN',
      409: 'CONFLICT',
      410: 'CLIENT_ERROR',
      418: 'CLIENT_ERROR',
      422: 'UNPROCESSABLE_CONTENT',
      429: 'RATE_LIMITED',
      501: 'NOT_IMPLEMENTED',
      503: 'SERVICE_UNAVAILABLE',
    };
    for (const [status, code] of Object.entries(codes)) {
      const thrown = await srv.fetch(`/thrown/${status}`);
      expect({ status: thrown.status, type: thrown.headers.get('content-type'), body: await thrown.json() }).toMatchObject({
        status: Number(status),
        type: 'application/problem+json',
        body: { status: Number(status), code, ...(Number(status) < 500 ? { detail: 'refused here' } : {}) },
      });
    }
    for (const status of [403, 405, 410, 501]) {
      const plain = await srv.fetch(`/plain/${status}`);
      expect([plain.status, plain.headers.get('content-type'), ((await plain.json()) as { status: number }).status]).toEqual([status, 'application/problem+json', status]);
    }
  });

  it('OPTIONS * asks about the server: 204 with every method it serves; another method on * is 400; a user route answers OPTIONS by the same rule (204, Allow with OPTIONS)', async () => {
    const { port } = new URL(srv.url);
    const raw = (line: string) =>
      new Promise<string>((resolve) => {
        const sock = connect(Number(port), '127.0.0.1', () => sock.write(`${line}\r\nHost: x\r\nConnection: close\r\n\r\n`));
        let got = '';
        sock.on('data', (d: Buffer) => (got += d.toString('latin1')));
        sock.on('close', () => resolve(got));
      });
    const star = await raw('OPTIONS * HTTP/1.1');
    expect(star).toMatch(/^HTTP\/1\.1 204 /);
    // Every method the contract's paths declare (HEAD wherever GET is), so an operation added with a new method is in it.
    const declared = new Set(
      Object.values(YAML.parse(readFileSync(join(__dirname, '../../contracts/openapi.yaml'), 'utf8')).paths as Record<string, object>).flatMap((item) => Object.keys(item).map((m) => m.toUpperCase())),
    );
    const allow = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter((m) => declared.has(m) || (m === 'HEAD' && declared.has('GET')));
    expect(allow).toEqual(expect.arrayContaining(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'OPTIONS']));
    expect(star).toContain(`\r\nAllow: ${allow.join(', ')}\r\n`);
    expect(await raw('GET * HTTP/1.1')).toMatch(/^HTTP\/1\.1 400 /);
    const user = await srv.fetch('/hello/ada', { method: 'OPTIONS' });
    expect(user.status).toBe(204);
    expect(user.headers.get('allow')).toMatch(/GET.*OPTIONS|OPTIONS.*GET/);
  });

  it("a CORS preflight on a user route allows the route's methods and says them in Allow, as on a contract path", async () => {
    const preflight = await srv.fetch('/hello/ada', { method: 'OPTIONS', headers: { origin: APP, 'access-control-request-method': 'GET' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(APP);
    const methods = (preflight.headers.get('access-control-allow-methods') ?? '').split(',').sort();
    expect(methods).toEqual(['GET', 'HEAD', 'OPTIONS']);
    expect(preflight.headers.get('allow')).toMatch(/GET.*OPTIONS|OPTIONS.*GET/);
    // A path no route serves: every method the service has (the request it announces is answered 404).
    const nowhere = await srv.fetch('/nowhere', { method: 'OPTIONS', headers: { origin: APP, 'access-control-request-method': 'PUT' } });
    expect(nowhere.status).toBe(204);
    expect(nowhere.headers.get('access-control-allow-methods')).toContain('PUT');
  });

  it('a percent-encoded unreserved character is that character (RFC 3986 6.2.2.2): one route, one spelling', async () => {
    const { id } = await createOrder(srv);
    const plain = await srv.fetch(`/orders/${id}`);
    const digits = [...String(id)].map((d) => `%3${d}`).join('');
    for (const path of [`/%6Frders/${id}`, `/%6frders/${id}`, `/orders/${digits}`, `/%6F%72%64%65%72%73/${id}`]) {
      const res = await srv.fetch(path);
      expect({ path, status: res.status, etag: res.headers.get('etag') }).toEqual({ path, status: 200, etag: plain.headers.get('etag') });
    }
    // A reserved character stays encoded: `%2F` is not a path separator.
    expect((await srv.fetch(`/orders%2F${id}`)).status).toBe(404);
  });

  it('a contract route owns its URL exactly: another case or a trailing slash is another (unknown) resource, also with a user route that would match it', async () => {
    const { id } = await createOrder(srv);
    expect((await srv.fetch(`/orders/${id}`)).status).toBe(200);
    for (const path of [`/ORDERS/${id}`, `/orders/${id}/`, `/V1/Orders/${id}`, `/Orders/${id}`, '/GRAPHQL', '/orders/']) {
      const res = await srv.fetch(path);
      expect({ path, status: res.status, type: res.headers.get('content-type') }).toEqual({ path, status: 404, type: 'application/problem+json' });
    }
  });

  it('OPTIONS answers 204 with the declared methods on every route, /graphql and the stream included; other methods get 405 with the same Allow (GraphQL-shaped on /graphql)', async () => {
    const { id } = await createOrder(srv);
    const cases: [string, string][] = [
      [`/orders/${id}`, 'GET, HEAD, PUT, PATCH, OPTIONS'],
      ['/orders', 'GET, HEAD, POST, OPTIONS'],
      ['/healthz', 'GET, HEAD, OPTIONS'],
      ['/graphql', 'GET, POST, HEAD, OPTIONS'],
      [`/api/orders/${id}/stream`, 'GET, HEAD, OPTIONS'],
    ];
    for (const [path, allow] of cases) {
      const res = await srv.fetch(path, { method: 'OPTIONS', as: 'anonymous' });
      expect({ path, status: res.status, allow: res.headers.get('allow'), body: await res.text() }).toEqual({ path, status: 204, allow, body: '' });
      // RFC 5789 3.1: where PATCH is, the patch document types it reads (those of its 415).
      const patch = routes.find((r) => r.method === 'PATCH' && r.path === '/orders/{orderId}');
      expect({ path, acceptPatch: res.headers.get('accept-patch') }).toEqual({ path, acceptPatch: allow.includes('PATCH') ? Object.keys(patch?.body?.contentTypes ?? {}).join(', ') : null });
      const refused = await srv.fetch(path, { method: 'DELETE' });
      const graphql = path === '/graphql';
      expect({ path, status: refused.status, allow: refused.headers.get('allow'), type: refused.headers.get('content-type')?.split(';')[0] }).toEqual({
        path,
        status: 405,
        allow,
        type: graphql ? 'application/json' : 'application/problem+json',
      });
      const body = (await refused.json()) as { errors?: { extensions?: { code?: string } }[]; code?: string };
      // One name for one refusal on both interfaces.
      expect(graphql ? body.errors?.[0]?.extensions?.code : body.code).toBe('METHOD_NOT_ALLOWED');
    }
  });

  it('HEAD of a GET-only resource is its GET without the body, with the length the body has', async () => {
    await createOrder(srv);
    const get = await srv.fetch('/orders?limit=2');
    const text = await get.text();
    const head = await srv.fetch('/orders?limit=2', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(await head.text()).toBe('');
  });

  it('HEAD of /graphql and of the stream is their GET without the body: the same status and fields, no stream opened', async () => {
    const { id } = await createOrder(srv);
    const query = `/graphql?query=${encodeURIComponent('{ __typename }')}`;
    const get = await srv.fetch(query);
    const text = await get.text();
    const head = await srv.fetch(query, { method: 'HEAD' });
    expect({ status: head.status, type: head.headers.get('content-type'), length: head.headers.get('content-length'), body: await head.text() }).toEqual({
      status: 200,
      type: get.headers.get('content-type'),
      length: String(Buffer.byteLength(text)),
      body: '',
    });
    // A mutation over HEAD is a mutation over GET: 405, Allow: POST.
    expect((await srv.fetch(`/graphql?query=${encodeURIComponent('mutation { __typename }')}`, { method: 'HEAD' })).status).toBe(405);
    const stream = await srv.fetch(`/api/orders/${id}/stream`, { method: 'HEAD' });
    expect({ status: stream.status, type: stream.headers.get('content-type'), body: await stream.text() }).toEqual({ status: 200, type: 'text/event-stream; charset=utf-8', body: '' });
    expect((await srv.fetch(`/api/orders/${id + 1000}/stream`, { method: 'HEAD' })).status).toBe(404);
    expect((await srv.fetch(`/api/orders/${id}/stream`, { method: 'HEAD', as: 'anonymous' })).status).toBe(401);
  });

  it('an absolute-form target (RFC 9112 3.2.2) is served as its origin form, by the contract routes and the Koa application alike', async () => {
    const { id } = await createOrder(srv);
    const { host } = new URL(srv.url);
    const viaTarget = (target: string) =>
      new Promise<{ status: number; etag?: string; body: string }>((resolve, reject) => {
        const req = request(srv.url, { path: target, headers: { authorization: `Bearer ${srv.alice.token}` } }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, etag: res.headers.etag, body }));
        });
        req.on('error', reject);
        req.end();
      });
    const origin = await srv.fetch(`/orders/${id}`);
    const absolute = await viaTarget(`http://${host}/orders/${id}`);
    expect({ status: absolute.status, etag: absolute.etag }).toEqual({ status: 200, etag: origin.headers.get('etag') });
    expect((await viaTarget(`HTTP://${host}/healthz`)).status).toBe(200);
    expect((await viaTarget(`http://${host}/graphql?query=${encodeURIComponent('{ __typename }')}`)).body).toBe('{"data":{"__typename":"Query"}}');
  });

  it('a problem answered to HEAD states the length GET would send, not 0', async () => {
    const get = await srv.fetch('/orders?limit=0');
    const head = await srv.fetch('/orders?limit=0', { method: 'HEAD' });
    expect(get.status).toBe(400);
    expect(head.status).toBe(400);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(await get.text())));
  });

  it('JSON nested deeper than the bound is a 400 naming it, with or without an Idempotency-Key, on REST and GraphQL', async () => {
    const deep = `${'['.repeat(6000)}${']'.repeat(6000)}`;
    const variants: Record<string, string>[] = [{ 'content-type': 'application/json' }, { 'content-type': 'application/json', 'idempotency-key': 'deep-1' }];
    for (const headers of variants) {
      const res = await srv.fetch('/orders', { method: 'POST', headers, body: deep });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toContain('64 levels');
    }
    const gql = await srv.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"query":"{ viewer { name } }","variables":{"a":${'['.repeat(5000)}${']'.repeat(5000)}}}`,
    });
    expect(gql.status).toBe(400);
    expect(((await gql.json()) as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBeDefined();
  });

  it('a user route gets the body limit: a declared body over it is 413 before the route runs, at once with Expect: 100-continue', async () => {
    const { port } = new URL(srv.url);
    const exchange = (bytes: string) =>
      new Promise<string>((resolve) => {
        let got = '';
        const sock = connect(Number(port), '127.0.0.1', () => sock.write(bytes));
        sock.on('data', (d: Buffer) => (got += d.toString('latin1')));
        sock.on('error', () => undefined);
        sock.on('close', () => resolve(got));
      });
    const head = (length: number) => `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n`;
    const waiting = await exchange(`${head(DEFAULT_BODY_LIMIT + 1)}Expect: 100-continue\r\n\r\n`);
    expect(waiting).toMatch(/^HTTP\/1\.1 413 /);
    expect(waiting).toMatch(/\r\nconnection: close\r\n/i);
    expect(waiting).not.toMatch(/100 Continue/);
    expect(await exchange(`${head(DEFAULT_BODY_LIMIT + 1)}\r\n${'x'.repeat(1000)}`)).toMatch(/^HTTP\/1\.1 413 /);
    const within = await srv.fetch('/echo', { method: 'POST', body: 'x'.repeat(1000) });
    expect([within.status, await within.json()]).toEqual([200, { bytes: 1000 }]);
  });

  it("a user route's 401, thrown or set, carries the service's WWW-Authenticate challenge", async () => {
    for (const path of ['/thrown/401', '/plain/401']) {
      const res = await srv.fetch(path);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="orderline"');
    }
  });
});

describe('hostile input the pipeline refuses (generated)', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(() => srv.close());

  it('a body that is not valid UTF-8 is a 400 and creates nothing', async () => {
    const fc = await import('fast-check');
    // Byte sequences that are never UTF-8: a lone continuation byte, an overlong form, a surrogate, a truncated sequence.
    const bad = fc.constantFrom([0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xff]);
    const before = (await (await srv.fetch('/orders?limit=100')).json()) as { orders: unknown[] };
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 20 }), bad, async (text, bytes) => {
        const prefix = Buffer.from(`{"note":"${text.replace(/["\\]/g, '')}`);
        const body = Buffer.concat([prefix, Buffer.from(bytes), Buffer.from('"}')]);
        const res = await srv.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        expect(res.status).toBe(400);
        expect(((await res.json()) as { detail: string }).detail).toContain('UTF-8');
      }),
      { numRuns: 25 },
    );
    const after = (await (await srv.fetch('/orders?limit=100')).json()) as { orders: unknown[] };
    expect(after.orders.length).toBe(before.orders.length);
  });

  it('HEAD of a missing order states the length of the problem GET sends', async () => {
    const get = await srv.fetch('/orders/999999');
    const head = await srv.fetch('/orders/999999', { method: 'HEAD' });
    expect([get.status, head.status]).toEqual([404, 404]);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(await get.text())));
  });

  it('GET /graphql with a mutation is a 405 in GraphQL’s shape, with a code and Allow: POST', async () => {
    const res = await srv.fetch(`/graphql?query=${encodeURIComponent('mutation { __typename }')}`, { headers: { accept: 'application/graphql-response+json' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    const { errors } = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(errors[0].extensions.code).toBe('METHOD_NOT_ALLOWED');
    // This schema has no mutations: the answer does not send the client to POST one.
    expect(errors[0].message).toBe('Only queries may be sent with GET (and this schema defines no mutations)');
  });

  it('a header sent empty is judged by its schema, not taken as absent: an empty Idempotency-Key or Api-Version is a 400', async () => {
    const { request } = await import('node:http');
    const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(`${srv.url}${path}`, { method, headers: { authorization: `Bearer ${srv.alice.token}`, ...headers } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(body);
      });
    const count = async () => ((await (await srv.fetch('/orders?limit=100')).json()) as { orders: unknown[] }).orders.length;
    const before = await count();
    expect(await send('POST', '/orders', { 'content-type': 'application/json', 'idempotency-key': '' }, '{}')).toBe(400);
    expect(await send('POST', '/orders', { 'content-type': 'application/json', 'idempotency-key': '' }, '{}')).toBe(400);
    expect(await count()).toBe(before);
    expect(await send('GET', '/orders', { 'api-version': '' })).toBe(400);
  });

  it('an integer parameter past 2^53, or not in canonical form (-0, 00, +2), is a 400, never judged as its neighbour', async () => {
    for (const v of ['9007199254740993', '100000000000000001', '-9007199254740993', '-0', '00', '+2']) {
      const res = await srv.fetch('/orders', { headers: { 'api-version': v } });
      expect({ v, status: res.status }).toEqual({ v, status: 400 });
    }
  });
});
