/**
 * SSE streams are served on node:http before Koa (realtime/sse.ts, http/edge.ts), so an
 * idle stream holds no Koa context (issue 13: memory per idle stream). These tests hold
 * the edge to two things: a stream request never reaches Koa, and for any request the
 * edge answers exactly what the Koa path answers (status, headers, problem+json body),
 * refusals included. Both paths run over the same store, each app with its own limiter
 * on a frozen clock (so both refuse the same requests).
 */
import { createServer, request, type RequestListener, type Server } from 'node:http';
import fc from 'fast-check';
import pino from 'pino';
import { createApp, type App } from '../../src/app';
import { parseConfig } from '../../src/config';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, touch } from '../support/streams';

const APP_ORIGIN = 'https://app.example.com';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request; a 200 stream is read up to its `retry:` line, then cut. */
function ask(url: string, headers: Record<string, string>, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { connection: 'close', ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
        if (res.statusCode === 200 && body.includes('\n\n')) {
          resolve({ status: 200, headers: res.headers, body: body.slice(0, body.indexOf('\n\n') + 2) });
          req.destroy();
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', () => undefined);
    });
    req.on('error', reject);
    req.end();
  });
}

/** What may differ between two answers to the same request: the date and a fresh request id. */
function comparable(a: Answer): Answer {
  const { date: _date, 'x-request-id': id, ...headers } = a.headers;
  return { status: a.status, headers: { ...headers, 'x-request-id': id === undefined ? 'none' : 'present' }, body: a.body };
}

async function serve(listener: RequestListener): Promise<{ url: string; server: Server }> {
  const server = createServer(listener);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

describe('SSE streams on the node:http edge', () => {
  let srv: TestServer;
  /** Apps over the test server's store, each pair made for one test so no test spends another's accept tokens. */
  const made: { app: App; server: Server }[] = [];

  /**
   * Two apps over the test server's store: one answered through its listener (edge
   * first), one through its Koa app alone; each with a burst of `burst` new streams on a
   * clock that never moves, so both refuse the same requests.
   */
  async function pair(burst: number): Promise<{ app: App; edge: string; koa: string }> {
    const parsed = parseConfig({ DATA_DIR: srv.dir, CORS_ORIGINS: APP_ORIGIN, ACCEPT_RATE: '1', ACCEPT_BURST: String(burst) });
    if (!parsed.ok) throw new Error(parsed.error);
    const deps = { config: parsed.config, store: srv.store, logger: pino({ level: 'silent' }), now: () => 0 };
    const [app, koaOnly] = [createApp(deps), createApp(deps)];
    const edge = await serve(app.listener);
    const koa = await serve(koaOnly.app.callback());
    made.push({ app, server: edge.server }, { app: koaOnly, server: koa.server });
    return { app, edge: edge.url, koa: koa.url };
  }

  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(async () => {
    for (const { app, server } of made) {
      app.realtime.close();
      server.closeAllConnections();
      server.close();
    }
    await srv.close();
  });

  it('a stream request is served without a Koa context; other methods on the path still get Koa’s 405', async () => {
    const { id } = await createOrder(srv);
    const { app, edge } = await pair(6);
    const contexts = jest.spyOn(app.app, 'createContext');
    try {
      const s = await ask(`${edge}/api/orders/${id}/stream`, { authorization: `Bearer ${srv.alice.token}` });
      expect(s.status).toBe(200);
      expect(s.body).toBe('retry: 2000\n\n');
      expect(contexts).not.toHaveBeenCalled();
      const post = await ask(`${edge}/api/orders/${id}/stream`, { authorization: `Bearer ${srv.alice.token}` }, 'POST');
      expect(post.status).toBe(405);
      expect(post.headers.allow).toBe('GET');
      expect(contexts).toHaveBeenCalledTimes(1);
    } finally {
      contexts.mockRestore();
    }
  });

  it('answers 406 problem+json when Accept does not admit text/event-stream, after 401 and 404; absent, */* or text/* is a stream', async () => {
    const { id } = await createOrder(srv);
    const { edge } = await pair(10);
    const auth = { authorization: `Bearer ${srv.alice.token}` };
    for (const accept of ['application/json', 'text/event-stream;q=0, */*']) {
      const r = await ask(`${edge}/api/orders/${id}/stream`, { ...auth, accept });
      expect([accept, r.status, r.headers['content-type']]).toEqual([accept, 406, 'application/problem+json']);
      expect(JSON.parse(r.body)).toMatchObject({ status: 406, code: 'NOT_ACCEPTABLE' });
    }
    expect((await ask(`${edge}/api/orders/${id}/stream`, { accept: 'application/json' })).status).toBe(401);
    expect((await ask(`${edge}/api/orders/999999999/stream`, { ...auth, accept: 'application/json' })).status).toBe(404);
    for (const accept of [undefined, '*/*', 'text/*', 'text/event-stream']) {
      const r = await ask(`${edge}/api/orders/${id}/stream`, accept === undefined ? auth : { ...auth, accept });
      expect([accept, r.status, r.body]).toEqual([accept, 200, 'retry: 2000\n\n']);
    }
  });

  it('answers every request as the Koa path does: streams, 401, 404, 406, 400 and 503 alike (headers, CORS and body)', async () => {
    const { id: mine } = await createOrder(srv);
    await touch(srv, mine, 2);
    const { id: bobs } = await createOrder(srv, {}, 'bob');
    const token = fc.constantFrom(srv.alice.token, srv.bob.token, 'garbage', undefined);
    const request = fc.record({
      id: fc.constantFrom(String(mine), String(bobs), '0', 'abc', '999999999', '01'),
      token,
      viaQuery: fc.boolean(),
      extraQuery: fc.constantFrom('', 'x=1', 'access_token=a&access_token=b'),
      lastEventId: fc.option(fc.constantFrom('0', '1', '3', '50', 'abc', ' 2', '-1', ''), { nil: undefined }),
      origin: fc.option(fc.constantFrom(APP_ORIGIN, 'https://other.example.com'), { nil: undefined }),
      accept: fc.option(fc.constantFrom('text/event-stream', '*/*', 'text/*', 'application/json', 'text/event-stream;q=0, */*', 'garbage', ''), { nil: undefined }),
    });
    // A burst of 2 on both apps (made for this test alone): it runs out part-way, so 503s are compared too.
    const { edge, koa } = await pair(2);
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const query = [r.extraQuery, r.viaQuery && r.token ? `access_token=${r.token}` : ''].filter(Boolean).join('&');
        const path = `/api/orders/${r.id}/stream${query ? `?${query}` : ''}`;
        const headers: Record<string, string> = {};
        if (r.token && !r.viaQuery) headers.authorization = `Bearer ${r.token}`;
        if (r.lastEventId !== undefined) headers['last-event-id'] = r.lastEventId;
        if (r.origin) headers.origin = r.origin;
        if (r.accept !== undefined) headers.accept = r.accept;
        const [viaEdge, viaKoa] = [await ask(edge + path, headers), await ask(koa + path, headers)];
        expect(comparable(viaEdge)).toEqual(comparable(viaKoa));
      }),
      { numRuns: 60 },
    );
  });
});
