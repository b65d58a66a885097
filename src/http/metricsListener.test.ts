import { createServer, type Server } from 'node:http';
import { Registry } from 'prom-client';
import { metricsListener, refusalLog, type MetricsListenerOptions, type MetricsRefusal } from './metricsListener';

const TOKEN = 'operator-token-0123456789';
const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

async function serve(opts: Partial<MetricsListenerOptions> = {}): Promise<string> {
  const server = createServer(metricsListener({ scrape: async () => 'up 1\n', contentType: Registry.PROMETHEUS_CONTENT_TYPE, ...opts }));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

describe('metricsListener', () => {
  it('answers GET and HEAD /metrics with the scrape and prom-client’s content type, never cached', async () => {
    const url = await serve();
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(Registry.PROMETHEUS_CONTENT_TYPE);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.text()).toBe('up 1\n');
    const head = await fetch(`${url}/metrics?x=1`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('5');
  });

  it('answers anything else with problem+json: 404 for another path, 405 with Allow for another method', async () => {
    const url = await serve();
    for (const path of ['/', '/healthz', '/metrics/', '/orders']) {
      const res = await fetch(url + path);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.json()).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    }
    const post = await fetch(`${url}/metrics`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(await post.json()).toMatchObject({ code: 'METHOD_NOT_ALLOWED' });
  });

  it('with a token, answers 401 with a Bearer challenge unless the scrape sends exactly that token', async () => {
    const url = await serve({ token: TOKEN });
    for (const authorization of [undefined, 'Bearer nope', `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, `Bearer ${TOKEN.slice(1)}`]) {
      const res = await fetch(`${url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const body = await res.text();
      expect(JSON.parse(body)).toMatchObject({ code: 'UNAUTHORIZED' });
      expect(body).not.toContain('up 1');
    }
    const ok = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('up 1\n');
  });

  it('answers 503 when the scrape cannot be collected (a cluster worker did not answer), and says why to onError', async () => {
    const errors: unknown[] = [];
    const url = await serve({ scrape: () => Promise.reject(new Error('Operation timed out.')), onError: (e) => errors.push(e) });
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(errors).toEqual([new Error('Operation timed out.')]);
  });

  it('tells onRefused of each refused request (a failed scrape login, a scanner), and refusalLog warns at most once per interval', async () => {
    const refused: MetricsRefusal[] = [];
    const url = await serve({ token: TOKEN, onRefused: (r) => refused.push(r) });
    await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer nope' } });
    await fetch(`${url}/admin?x=1`);
    await fetch(`${url}/metrics`, { method: 'DELETE' });
    expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect(refused).toEqual([
      { status: 401, method: 'GET', path: '/metrics', remoteAddress: '127.0.0.1' },
      { status: 404, method: 'GET', path: '/admin', remoteAddress: '127.0.0.1' },
      { status: 405, method: 'DELETE', path: '/metrics', remoteAddress: '127.0.0.1' },
    ]);
    const warned: [object, string][] = [];
    const log = refusalLog({ warn: (o: object, msg: string) => void warned.push([o, msg]) }, 60_000);
    for (const r of refused) log(r);
    expect(warned).toEqual([[{ ...refused[0], suppressed: 0 }, 'metrics request refused']]);
  });
});
