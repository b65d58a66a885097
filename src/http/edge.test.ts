import { createServer, type RequestListener, type Server } from 'node:http';
import fc from 'fast-check';
import Koa from 'koa';
import pino from 'pino';
import { corsMiddleware } from './cors';
import { EdgeEssentials, edgeListener, type EdgeRoute } from './edge';
import { HttpTimer, Metrics } from './metrics';

async function serve(listener: RequestListener): Promise<{ url: string; server: Server }> {
  const server = createServer(listener);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

describe('edgeListener', () => {
  it('tries the routes in order and gives Koa what every route declines, also when a route declines later', async () => {
    const seen: string[] = [];
    const first: EdgeRoute = (req, res, next) => {
      seen.push('first');
      if (req.url === '/first') res.end('first');
      else next();
    };
    const later: EdgeRoute = (req, res, next) => {
      seen.push('later');
      if (req.url === '/later') setImmediate(() => res.end('later'));
      else setImmediate(next); // declines after an asynchronous look (a cache miss, say)
    };
    const koa = new Koa();
    koa.use((ctx) => {
      seen.push('koa');
      ctx.body = 'koa';
    });
    const { url, server } = await serve(edgeListener([first, later], koa.callback()));
    try {
      expect(await (await fetch(`${url}/first`)).text()).toBe('first');
      expect(seen.splice(0)).toEqual(['first']);
      expect(await (await fetch(`${url}/later`)).text()).toBe('later');
      expect(seen.splice(0)).toEqual(['first', 'later']);
      expect(await (await fetch(`${url}/other`)).text()).toBe('koa');
      expect(seen.splice(0)).toEqual(['first', 'later', 'koa']);
    } finally {
      server.close();
    }
  });
});

describe('EdgeEssentials', () => {
  const origin = fc.constantFrom('https://app.example.com', 'https://other.example.com', 'http://localhost:5173');
  const policy = fc.oneof(fc.constant<string[]>([]), fc.constant(['*']), fc.uniqueArray(origin, { minLength: 1 }));

  it('sends the CORS headers and Vary that corsMiddleware sends on the same request, for any policy and Origin', async () => {
    await fc.assert(
      fc.asyncProperty(policy, fc.option(origin, { nil: undefined }), async (origins, sent) => {
        const koa = new Koa();
        const mw = corsMiddleware(origins);
        if (mw) koa.use(mw);
        koa.use((ctx) => {
          ctx.set('Vary', 'Accept');
          ctx.body = 'x';
        });
        const essentials = new EdgeEssentials(pino({ level: 'silent' }), new HttpTimer(new Metrics()), origins);
        const raw: RequestListener = (req, res) => {
          essentials.begin(req, res);
          res.setHeader('Vary', essentials.vary('Accept'));
          res.end('x');
        };
        const a = await serve(koa.callback());
        const b = await serve(raw);
        try {
          const headers: Record<string, string> = sent === undefined ? {} : { origin: sent };
          const [ka, ra] = await Promise.all([fetch(a.url, { headers }), fetch(b.url, { headers })]);
          for (const name of ['access-control-allow-origin', 'access-control-expose-headers', 'vary']) expect([name, ra.headers.get(name)]).toEqual([name, ka.headers.get(name)]);
        } finally {
          a.server.close();
          b.server.close();
        }
      }),
      { numRuns: 25 },
    );
  });

  it('echoes a plain client request id, replaces anything else, and records the duration metric', async () => {
    const metrics = new Metrics();
    const essentials = new EdgeEssentials(pino({ level: 'silent' }), new HttpTimer(metrics), []);
    const { url, server } = await serve((req, res) => {
      const begun = essentials.begin(req, res);
      res.end();
      essentials.end(req, '/edge', 204, begun, '/edge');
    });
    try {
      expect((await fetch(url, { headers: { 'x-request-id': 'abc-1' } })).headers.get('x-request-id')).toBe('abc-1');
      const replaced = (await fetch(url, { headers: { 'x-request-id': 'bad id with spaces' } })).headers.get('x-request-id');
      expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
      expect(await metrics.registry.metrics()).toMatch(/orderline_http_request_duration_seconds_count\{method="GET",route="\/edge",status="204"\} 2/);
    } finally {
      server.close();
    }
  });
});
