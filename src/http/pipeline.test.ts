import fc from 'fast-check';
import { createServer } from 'node:http';
import pino from 'pino';
import type { RouteSpec } from '../../generated/openapi/routes';
import { AuthCache } from './authCache';
import { Finalizer } from './finalize';
import { HttpTimer, Metrics } from './metrics';
import { createPipeline, originForm } from './pipeline';
import type { Operation } from './rest/operations';

/** A route table whose lookup throws: the kind of bug the catch-all is for. */
class BrokenOperations extends Map<RouteSpec, Operation> {
  override get(): Operation | undefined {
    throw new Error('a bug in routing');
  }
}

describe('createPipeline', () => {
  it('answers a synchronous throw on the request path with a 500 problem, logs it, and keeps serving', async () => {
    const errors: unknown[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => void errors.push(JSON.parse(line)) });
    const metrics = new Metrics();
    const listener = createPipeline({
      finalizer: new Finalizer(logger, new HttpTimer(metrics), []),
      operations: new BrokenOperations(),
      store: { tokenBySelector: () => Promise.resolve(null) },
      authCache: new AuthCache(0),
      bodyLimit: 1024,
      transports: [],
      fallback: (_req, res) => res.end('fallback'),
    });
    const server = createServer(listener);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${url}/orders`);
        expect(res.status).toBe(500);
        expect(res.headers.get('content-type')).toBe('application/problem+json');
        expect(await res.json()).toMatchObject({ code: 'INTERNAL' });
      }
      expect(await (await fetch(`${url}/not-declared`)).text()).toBe('fallback');
      expect(errors).toHaveLength(2);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe('originForm (RFC 9112 3.2.2: absolute-form targets)', () => {
  it('keeps the path and query of an absolute-form target, whatever its scheme case and authority (generated)', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9._~%-]{0,8}$/);
    fc.assert(
      fc.property(
        fc.constantFrom('http', 'https', 'HTTP', 'Https'),
        fc.constantFrom('example.com', '127.0.0.1:3000', '[::1]:8080', 'user@host'),
        fc.array(segment, { maxLength: 4 }),
        fc.option(fc.stringMatching(/^[a-z0-9=&]{0,12}$/), { nil: undefined }),
        (scheme, authority, segments, query) => {
          const path = `/${segments.join('/')}`;
          const target = `${path}${query === undefined ? '' : `?${query}`}`;
          expect(originForm(`${scheme}://${authority}${target}`)).toBe(target);
          if (query !== undefined) expect(originForm(`${scheme}://${authority}?${query}`)).toBe(`/?${query}`);
          expect(originForm(`${scheme}://${authority}`)).toBe('/');
        },
      ),
    );
  });
});
