/**
 * What a backend developer does to add an operation, done on a copy of the service: add
 * `GET /orders/{orderId}/events` to contracts/openapi.yaml, run codegen, implement the
 * handler the generated `Handlers` type now asks for (a few lines), serve. The pipeline
 * serves it with everything every operation gets and no code of its own: authentication,
 * the request id, CORS, the duration metric by route template, a 400 problem for a bad
 * parameter, a 401 without a token, and a 304 for a client that holds its ETag.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import type { createApp as CreateApp } from '../../src/app';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder } from '../support/streams';

const ROOT = join(__dirname, '../..');
const APP = 'http://app.example.test';

/** The operation a developer adds: the order's events, conditional on an ETag. */
const OPERATION = {
  parameters: [{ $ref: '#/components/parameters/OrderId' }],
  get: {
    operationId: 'listOrderEvents',
    summary: "The order's events, oldest first",
    parameters: [
      { $ref: '#/components/parameters/IfNoneMatch' },
      { $ref: '#/components/parameters/Accept' },
      // A filter given as a repeated query parameter (style form, explode: the defaults).
      { name: 'type', in: 'query', required: false, schema: { type: 'array', items: { type: 'string', enum: ['order.created', 'order.updated', 'order.cancelled'] } } },
      // A page size with a default: the handler is given 2 when the client names none.
      { name: 'max', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 2 } },
      // A list of integers: each read as strictly as a single integer parameter.
      { name: 'seq', in: 'query', required: false, schema: { type: 'array', items: { type: 'integer', minimum: 1 } } },
      // A header parameter of its own: a browser's preflight must allow it, with no list edited.
      { name: 'X-Event-Filter', in: 'header', required: false, schema: { type: 'string', maxLength: 40 } },
    ],
    responses: {
      '200': {
        description: 'The events.',
        // The shared 304 requires what it repeats of the 200 (codegen refuses a 200 without them).
        headers: {
          ETag: { $ref: '#/components/headers/ETag' },
          'Cache-Control': { $ref: '#/components/headers/CacheControl' },
          Vary: { $ref: '#/components/headers/Vary' },
          // A response header of its own: a cross-origin script may read it, with no list edited.
          'X-Event-Count': { required: true, schema: { type: 'string' } },
        },
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['events'],
              properties: { events: { type: 'array', items: { type: 'object', required: ['seq', 'type'], properties: { seq: { type: 'integer' }, type: { type: 'string' } } } } },
            },
          },
        },
      },
      '304': { $ref: '#/components/responses/NotModified' },
      '400': { $ref: '#/components/responses/E400' },
      '401': { $ref: '#/components/responses/E401' },
      '404': { $ref: '#/components/responses/E404' },
      '406': { $ref: '#/components/responses/E406' },
      '412': { $ref: '#/components/responses/E412Read' },
      '413': { $ref: '#/components/responses/E413' },
      '429': { $ref: '#/components/responses/E429' },
      '503': { $ref: '#/components/responses/E503' },
    },
  },
  // Every path declares the one OPTIONS rule, and every operation the 503, 412 and 413 (codegen refuses them otherwise).
  options: {
    operationId: 'optionsOrdersOrderIdEvents',
    tags: ['http'],
    summary: 'The methods of this path; the CORS preflight',
    security: [],
    responses: { '204': { $ref: '#/components/responses/Options' }, '503': { $ref: '#/components/responses/E503' } },
  },
};

/** A second one: the same events as CSV, one media type, with Accept declared (so the 406 comes with it); deprecated on its own. */
const CSV_OPERATION = {
  parameters: [{ $ref: '#/components/parameters/OrderId' }],
  get: {
    operationId: 'exportOrderEvents',
    summary: "The order's events as CSV",
    deprecated: true,
    'x-deprecated-at': '2026-11-01',
    'x-sunset': '2027-03-31',
    'x-deprecation-link': 'https://example.test/migrate-csv',
    parameters: [{ $ref: '#/components/parameters/Accept' }],
    responses: {
      '200': { description: 'seq,type lines.', content: { 'text/csv': { schema: { type: 'string' } } } },
      '400': { $ref: '#/components/responses/E400' },
      '401': { $ref: '#/components/responses/E401' },
      '404': { $ref: '#/components/responses/E404' },
      '406': { $ref: '#/components/responses/E406' },
      '412': { $ref: '#/components/responses/E412Read' },
      '413': { $ref: '#/components/responses/E413' },
      '429': { $ref: '#/components/responses/E429' },
      '503': { $ref: '#/components/responses/E503' },
    },
  },
  options: OPERATION.options,
};

/** The handler, as the developer writes it. */
const HANDLER = `import type { Store } from '../../store';
import { problem, PROBLEM_MEDIA_TYPE } from '../problem';
import type { OperationHandlers } from './operations';

export const eventHandlers = (store: Store): Pick<OperationHandlers, 'listOrderEvents' | 'exportOrderEvents'> => ({
  async exportOrderEvents(req, ctx) {
    const order = await store.getOrder(ctx.account.id, req.params.orderId);
    if (!order) return { status: 404, contentType: PROBLEM_MEDIA_TYPE, body: problem('NOT_FOUND', 'No such order') };
    // A handler that casts its way past its generated type (the bug the pipeline still catches).
    if (order.note === 'teapot') return { status: 418, contentType: 'text/plain', body: 'short and stout' } as never;
    const events = await store.eventsAfter(order.id, 0, 100);
    return { status: 200, contentType: 'text/csv', body: events.map((e) => \`\${e.seq},\${e.type}\\n\`).join('') };
  },
  async listOrderEvents(req, ctx) {
    const order = await store.getOrder(ctx.account.id, req.params.orderId);
    if (!order) return { status: 404, contentType: PROBLEM_MEDIA_TYPE, body: problem('NOT_FOUND', 'No such order') };
    const types = req.query.type;
    const seqs = req.query.seq;
    const events = (await store.eventsAfter(order.id, 0, 100)).filter((e) => (!types || types.includes(e.type)) && (!seqs || seqs.includes(e.seq))).slice(0, req.query.max);
    return { status: 200, headers: { ETag: \`"events-\${order.id}-\${order.revision}"\`, 'Cache-Control': 'private, no-cache', Vary: 'Accept', 'X-Event-Count': String(events.length) }, contentType: 'application/json', body: { events: events.map((e) => ({ seq: e.seq, type: e.type })) } };
  },
});
`;

describe('a new contract operation is served by the pipeline with no code beyond its handler', () => {
  const copy = join(ROOT, '.tmp', `new-operation-${process.pid}`);
  let srv: TestServer;

  beforeAll(async () => {
    rmSync(copy, { recursive: true, force: true });
    mkdirSync(copy, { recursive: true });
    for (const dir of ['contracts', 'codegen', 'src', 'generated', 'sdk/src']) cpSync(join(ROOT, dir), join(copy, dir), { recursive: true });
    const contractPath = join(copy, 'contracts/openapi.yaml');
    const contract = YAML.parse(readFileSync(contractPath, 'utf8')) as { paths: Record<string, unknown> };
    contract.paths['/orders/{orderId}/events'] = OPERATION;
    contract.paths['/orders/{orderId}/events.csv'] = CSV_OPERATION;
    // An existing negotiated operation deprecated on its own: its v1 representation is deprecated too, with other dates.
    Object.assign((contract.paths['/orders/{orderId}'] as { get: object }).get, { deprecated: true, 'x-deprecated-at': '2026-10-01', 'x-sunset': '2027-01-31' });
    writeFileSync(contractPath, YAML.stringify(contract));
    execFileSync(process.execPath, [require.resolve('tsx/cli'), join(copy, 'codegen/index.ts'), '--root', copy, '--no-docs'], { cwd: ROOT, stdio: 'pipe' });
    writeFileSync(join(copy, 'src/http/rest/events.ts'), HANDLER);
    const index = join(copy, 'src/http/rest/index.ts');
    writeFileSync(
      index,
      readFileSync(index, 'utf8')
        .replace("import { docsHandlers } from './docs';", "import { docsHandlers } from './docs';\nimport { eventHandlers } from './events';")
        .replace('    ...docsHandlers(),', '    ...docsHandlers(),\n    ...eventHandlers(deps.store),'),
    );
    const { createApp } = (await import(join(copy, 'src/app'))) as { createApp: typeof CreateApp };
    srv = await startTestServer({ CORS_ORIGINS: APP }, {}, createApp);
  }, 120_000);

  afterAll(async () => {
    await srv?.close();
    rmSync(copy, { recursive: true, force: true });
  });

  it('codegen routed it: the generated matcher knows the path', () => {
    expect(readFileSync(join(copy, 'generated/openapi/routes.ts'), 'utf8')).toContain('"/orders/{orderId}/events"');
  });

  it('serves it with authentication, request id, CORS, the metric, and 304 for a held ETag', async () => {
    const { id } = await createOrder(srv);
    await srv.fetch(`/orders/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json', 'if-match': `"${id}-1-v2j"` }, body: '{"note":"x"}' });
    const res = await srv.fetch(`/orders/${id}/events`, { headers: { origin: APP, 'x-request-id': 'events-1' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      events: [
        { seq: 1, type: 'order.created' },
        { seq: 2, type: 'order.updated' },
      ],
    });
    expect(res.headers.get('x-request-id')).toBe('events-1');
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    expect(res.headers.get('x-event-count')).toBe('2');
    expect(res.headers.get('access-control-expose-headers')?.split(',')).toContain('X-Event-Count');
    const preflight = await srv.fetch(`/orders/${id}/events`, { method: 'OPTIONS', headers: { origin: APP, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-event-filter' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')?.split(',')).toContain('X-Event-Filter');
    const etag = res.headers.get('etag');
    expect(etag).toBe(`"events-${id}-2"`);
    const again = await srv.fetch(`/orders/${id}/events`, { headers: { 'if-none-match': etag ?? '' } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('cache-control')).toBe('private, no-cache');
    expect(again.headers.get('vary')).toMatch(/^Accept\b/);
    expect(await again.text()).toBe('');
    const metrics = await srv.metrics.registry.metrics();
    expect(metrics).toMatch(/orderline_http_request_duration_seconds_count\{method="GET",route="\/orders\/\{orderId\}\/events",status="200"\} 1/);
    expect(metrics).toMatch(/route="\/orders\/\{orderId\}\/events",status="304"\} 1/);
  });

  it('refuses by the contract: 401 without a token, 400 for a bad id, 404 for another account’s order, 405 with Allow', async () => {
    const { id } = await createOrder(srv);
    const anonymous = await srv.fetch(`/orders/${id}/events`, { as: 'anonymous' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('Bearer');
    const bad = await srv.fetch('/orders/01/events');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await srv.fetch(`/orders/${id}/events`, { as: 'bob' })).status).toBe(404);
    const post = await srv.fetch(`/orders/${id}/events`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it("a status the contract does not declare, answered past the handler's type, is never sent: 500 INTERNAL", async () => {
    const { id } = await createOrder(srv, { note: 'teapot' });
    const res = await srv.fetch(`/orders/${id}/events.csv`, { headers: { accept: 'text/csv' } });
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ code: 'INTERNAL' });
    // Deprecated on its own (below): every answer says so, this one too.
    expect(res.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(res.headers.get('sunset')).not.toBeNull();
  });

  it('declaring Accept brings the 406 for a non-JSON media type too', async () => {
    const { id } = await createOrder(srv);
    const csv = await srv.fetch(`/orders/${id}/events.csv`, { headers: { accept: 'text/csv' } });
    expect({ status: csv.status, type: csv.headers.get('content-type'), body: await csv.text() }).toEqual({ status: 200, type: expect.stringMatching(/^text\/csv/), body: '1,order.created\n' });
    expect((await srv.fetch(`/orders/${id}/events.csv`, { headers: { accept: 'application/json' } })).status).toBe(406);
    expect((await srv.fetch(`/orders/${id}/events.csv`, { headers: { accept: 'text/*' } })).status).toBe(200);
  });

  it('a request that breaks its contract is told so (400) before its Accept is judged (406), as on the operations that negotiate themselves', async () => {
    const pointers = async (path: string, accept: string) => {
      const res = await srv.fetch(path, { headers: { accept } });
      const body = (await res.json()) as { errors?: { pointer: string }[] };
      return { status: res.status, pointers: (body.errors ?? []).map((e) => e.pointer) };
    };
    const { id } = await createOrder(srv);
    expect(await pointers('/orders/abc/events.csv', 'application/json')).toEqual({ status: 400, pointers: ['path:orderId'] });
    expect(await pointers(`/orders/${id}/events.csv`, 'a'.repeat(1001))).toEqual({ status: 400, pointers: ['header:Accept'] });
    expect((await pointers('/orders/abc', 'a'.repeat(1001))).status).toBe(400); // the order read, which negotiates in its handler, alike
    expect((await pointers(`/orders/${id}/events.csv`, 'application/json')).status).toBe(406);
  });

  it('an operation deprecated on its own says so on every answer, from the dates in its contract', async () => {
    const { id } = await createOrder(srv);
    const deprecation = { deprecation: `@${Date.UTC(2026, 10, 1) / 1000}`, sunset: 'Wed, 31 Mar 2027 23:59:59 GMT', link: '<https://example.test/migrate-csv>; rel="deprecation"; type="text/html"' };
    const heads = (r: Response) => ({ status: r.status, deprecation: r.headers.get('deprecation'), sunset: r.headers.get('sunset'), link: r.headers.get('link') });
    expect(heads(await srv.fetch(`/orders/${id}/events.csv`, { headers: { accept: 'text/csv' } }))).toEqual({ status: 200, ...deprecation });
    expect(heads(await srv.fetch(`/orders/${id}/events.csv`, { as: 'bob' }))).toEqual({ status: 404, ...deprecation });
    expect(heads(await srv.fetch(`/orders/${id}/events.csv`, { as: 'anonymous' }))).toEqual({ status: 401, ...deprecation });
    // A browser on another origin may read them; the operation beside it, not deprecated, sends none.
    const cors = await srv.fetch(`/orders/${id}/events.csv`, { headers: { origin: APP } });
    expect(cors.headers.get('access-control-expose-headers')).toEqual(expect.stringContaining('Deprecation'));
    expect(heads(await srv.fetch(`/orders/${id}/events`))).toEqual({ status: 200, deprecation: null, sunset: null, link: null });
  });

  it("an operation deprecated on its own answers its own dates once, also for a deprecated version's representation", async () => {
    const { id } = await createOrder(srv);
    const own = { deprecation: `@${Date.UTC(2026, 9, 1) / 1000}`, sunset: 'Sun, 31 Jan 2027 23:59:59 GMT' };
    for (const version of ['1', '2']) {
      const res = await srv.fetch(`/orders/${id}`, { headers: { 'api-version': version } });
      expect({ version, status: res.status, deprecation: res.headers.get('deprecation'), sunset: res.headers.get('sunset'), link: res.headers.get('link') }).toEqual({ version, status: 200, ...own, link: null });
    }
  });

  it("a query parameter's default is applied when the client names none; a query array takes one value or many; a value outside its enum is 400", async () => {
    const { id } = await createOrder(srv);
    await srv.fetch(`/orders/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json', 'if-match': `"${id}-1-v2j"` }, body: '{"note":"y"}' });
    await srv.fetch(`/orders/${id}/cancel`, { method: 'POST', headers: { 'if-match': `"${id}-2-v2j"` } });
    const typesOf = async (query: string) => ((await (await srv.fetch(`/orders/${id}/events${query}`)).json()) as { events: { type: string }[] }).events.map((e) => e.type);
    expect(await typesOf('')).toEqual(['order.created', 'order.updated']);
    expect(await typesOf('?max=5')).toEqual(['order.created', 'order.updated', 'order.cancelled']);
    expect(await typesOf('?type=order.cancelled')).toEqual(['order.cancelled']);
    expect(await typesOf('?type=order.created&type=order.cancelled')).toEqual(['order.created', 'order.cancelled']);
    expect((await srv.fetch(`/orders/${id}/events?max=0`)).status).toBe(400);
    // An integer list: canonical decimal items only; a single integer given twice is refused, naming why.
    expect(await typesOf('?seq=3&seq=1')).toEqual(['order.created', 'order.cancelled']);
    for (const bad of ['0x2', '1e0', '01', '+1', '1.0', '9007199254740993']) expect({ bad, status: (await srv.fetch(`/orders/${id}/events?seq=1&seq=${encodeURIComponent(bad)}`)).status }).toEqual({ bad, status: 400 });
    const twice = await srv.fetch(`/orders/${id}/events?max=5&max=6`);
    expect(twice.status).toBe(400);
    expect(await twice.json()).toMatchObject({ errors: [{ pointer: 'query:max', message: 'may be given once' }] });
    expect((await srv.fetch(`/orders/${id}/events?type=order.shipped`)).status).toBe(400);
  });

  it('declaring Accept brings the 406: an Accept that admits not its one media type is refused, one that does is served', async () => {
    const { id } = await createOrder(srv);
    for (const accept of ['text/html', 'application/xml;q=1, application/json;q=0']) {
      const r = await srv.fetch(`/orders/${id}/events`, { headers: { accept } });
      expect({ accept, status: r.status, code: ((await r.json()) as { code: string }).code }).toEqual({ accept, status: 406, code: 'NOT_ACCEPTABLE' });
    }
    for (const accept of ['application/json', '*/*', 'application/*;q=0.5']) expect((await srv.fetch(`/orders/${id}/events`, { headers: { accept } })).status).toBe(200);
  });
});
