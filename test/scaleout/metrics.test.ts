/**
 * /metrics with WORKERS=2: every scrape of the operator listener (METRICS_PORT, served by the
 * primary) shows the whole instance (prom-client's AggregatorRegistry, src/http/clusterMetrics.ts),
 * with prom-client's content type. Each request opens its own connection, so the primary's
 * round-robin spreads the counted requests over both workers: one worker's registry alone
 * would show about half of them. The public port does not serve /metrics.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { Registry } from 'prom-client';
import { hasExited, sleep, startInstance, startRedis, workersOf } from '../support/instances';

jest.setTimeout(180_000);

/** GET on a fresh connection (no keep-alive), so connections are spread over the workers. */
const get = (url: string) =>
  new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
    const req = request(url, { agent: false, headers: { connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body }));
    });
    req.once('error', reject);
    req.end();
  });

/** Sum of `orderline_http_request_duration_seconds_count` over the series of one route. */
const countOf = (text: string, route: string): number =>
  text
    .split('\n')
    .filter((l) => l.startsWith('orderline_http_request_duration_seconds_count{') && l.includes(`route="${route}"`))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);

describe('/metrics', () => {
  it('with WORKERS=2, every scrape counts the requests of both workers', async () => {
    const redis = await startRedis();
    const srv = await startInstance({ WORKERS: '2', REDIS_URL: redis.url });
    try {
      const N = 24;
      for (let i = 0; i < N; i++) expect((await get(`${srv.url}/healthz`)).status).toBe(200);
      expect(srv.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await get(`${srv.url}/metrics`)).status).toBe(404);
      for (let i = 0; i < 4; i++) {
        const scrape = await get(`${srv.metricsUrl}/metrics`);
        expect(scrape.status).toBe(200);
        expect(scrape.type).toBe(Registry.PROMETHEUS_CONTENT_TYPE);
        expect(countOf(scrape.body, '/healthz')).toBe(N);
        expect(scrape.body).not.toMatch(/route="\/metrics"/); // the public 404s are not counted as a route
        // Default metrics are aggregated too: one series each, not one per worker.
        expect(scrape.body.match(/^nodejs_version_info\{/gm)).toHaveLength(1);
        // The instance's start (its oldest worker's: a number of seconds since the epoch, in the past) and a
        // file-descriptor limit that is one process's, not the workers' sum.
        const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(scrape.body)?.[1]);
        expect(value('process_start_time_seconds')).toBeGreaterThan(1.7e9);
        expect(value('process_start_time_seconds')).toBeLessThanOrEqual(Date.now() / 1000);
        const [worker] = workersOf(srv.child.pid!);
        const limit = /^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${worker}/limits`, 'utf8'))?.[1];
        expect(value('process_max_fds')).toBe(Number(limit));
      }
    } finally {
      await srv.kill('SIGTERM');
      await redis.kill();
    }
  });

  it('with WORKERS=2, a summed counter never goes down when a worker dies and is replaced, nor fails while one hangs', async () => {
    const redis = await startRedis();
    const srv = await startInstance({ WORKERS: '2', REDIS_URL: redis.url });
    const scrape = async () => countOf((await get(`${srv.metricsUrl}/metrics`)).body, '/healthz');
    try {
      const N = 24;
      for (let i = 0; i < N; i++) expect((await get(`${srv.url}/healthz`)).status).toBe(200);
      expect(await scrape()).toBe(N);
      const workers = workersOf(srv.child.pid!);
      expect(workers).toHaveLength(2);
      process.kill(workers[0], 'SIGKILL');
      for (let i = 0; i < 100 && !hasExited(workers[0]); i++) await sleep(50);
      expect(hasExited(workers[0])).toBe(true);
      // Prometheus reads any drop of a counter as a reset: the dead worker's share stays counted.
      expect(await scrape()).toBe(N);
      let now: number[] = [];
      for (let i = 0; i < 100 && (now.length < 2 || now.includes(workers[0])); i++) {
        await sleep(100);
        now = workersOf(srv.child.pid!);
      }
      expect(now).toHaveLength(2);
      for (let i = 0; i < N; i++) expect((await get(`${srv.url}/healthz`)).status).toBe(200);
      expect(await scrape()).toBe(2 * N);
      // A worker that cannot answer (stopped) counts with what it reported last; the scrape still answers.
      process.kill(now[0], 'SIGSTOP');
      try {
        const hung = await get(`${srv.metricsUrl}/metrics`);
        expect(hung.status).toBe(200);
        expect(countOf(hung.body, '/healthz')).toBe(2 * N);
      } finally {
        process.kill(now[0], 'SIGCONT');
      }
    } finally {
      await srv.kill('SIGTERM');
      await redis.kill();
    }
  });

  it('in one process, answers with prom-client’s content type', async () => {
    const srv = await startInstance({});
    try {
      for (let i = 0; i < 3; i++) await get(`${srv.url}/healthz`);
      expect((await get(`${srv.url}/metrics`)).status).toBe(404);
      const scrape = await get(`${srv.metricsUrl}/metrics`);
      expect(scrape.status).toBe(200);
      expect(scrape.type).toBe(Registry.PROMETHEUS_CONTENT_TYPE);
      expect(countOf(scrape.body, '/healthz')).toBe(3);
    } finally {
      await srv.kill('SIGTERM');
    }
  });
});
