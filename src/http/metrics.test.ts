import fc from 'fast-check';
import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { DurationHistogram, HttpTimer, Metrics } from './metrics';

const NAME = 'orderline_http_request_duration_seconds';
const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const config = (registry: Registry) => ({ name: NAME, help: 'durations', labelNames: ['method', 'route', 'status'] as const, buckets: BUCKETS, registers: [registry] });

/** A recorded histogram and prom-client's own, fed the same observations. */
function pair() {
  const ours = new Registry();
  const theirs = new Registry();
  return { ours, theirs, recorded: new DurationHistogram(config(ours)), observed: new Histogram(config(theirs)) };
}

const observation = fc.record({
  method: fc.constantFrom('GET', 'POST', 'PATCH', 'HEAD'),
  route: fc.constantFrom('/orders/{orderId}', '/orders', '/graphql', 'unmatched'),
  status: fc.constantFrom(200, 201, 304, 400, 404, 503),
  // Bucket bounds themselves (an observation equal to a bound counts in that bucket) and anything between.
  seconds: fc.oneof(fc.constantFrom(0, ...BUCKETS), fc.double({ min: 0, max: 5, noNaN: true })),
});

const withoutExemplars = (json: Awaited<ReturnType<Registry['getMetricsAsJSON']>>) =>
  json.map((m) => ({ ...m, values: m.values.map(({ value, labels, ...rest }) => ({ value, labels, metricName: 'metricName' in rest ? rest.metricName : undefined })) }));

describe('DurationHistogram', () => {
  it("scrapes exactly as prom-client's Histogram fed the same observations (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(observation, { maxLength: 60 }), async (observations) => {
        const { ours, theirs, recorded, observed } = pair();
        for (const o of observations) {
          recorded.record(o.method, o.route, o.status, o.seconds);
          observed.observe({ method: o.method, route: o.route, status: String(o.status) }, o.seconds);
        }
        expect(await ours.metrics()).toBe(await theirs.metrics());
        expect(withoutExemplars(await ours.getMetricsAsJSON())).toEqual(withoutExemplars(await theirs.getMetricsAsJSON()));
      }),
      { numRuns: 200 },
    );
  });

  it("aggregates across workers (the cluster primary's AggregatorRegistry) as prom-client's own does (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(observation, { maxLength: 20 }), { minLength: 1, maxLength: 3 }), async (workers) => {
        const ours: Awaited<ReturnType<Registry['getMetricsAsJSON']>>[] = [];
        const theirs: typeof ours = [];
        for (const observations of workers) {
          const p = pair();
          for (const o of observations) {
            p.recorded.record(o.method, o.route, o.status, o.seconds);
            p.observed.observe({ method: o.method, route: o.route, status: String(o.status) }, o.seconds);
          }
          ours.push(await p.ours.getMetricsAsJSON());
          theirs.push(await p.theirs.getMetricsAsJSON());
        }
        expect(await AggregatorRegistry.aggregate(ours).metrics()).toBe(await AggregatorRegistry.aggregate(theirs).metrics());
      }),
      { numRuns: 100 },
    );
  });

  it('reset forgets every recorded series', async () => {
    const { ours, recorded } = pair();
    recorded.record('GET', '/orders', 200, 0.002);
    recorded.reset();
    expect(await ours.metrics()).not.toContain('route="/orders"');
  });
});

describe('HttpTimer', () => {
  it('labels the methods a route may serve by name and any other a client invents as OTHER (bounded series, generated)', async () => {
    const metrics = new Metrics();
    const timer = new HttpTimer(metrics);
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Z]{3,12}$/), (method) => {
        timer.observe(method, 'unmatched', 405, process.hrtime.bigint());
      }),
    );
    for (const m of ['GET', 'HEAD', 'OPTIONS', 'UNPARSED']) timer.observe(m, 'unmatched', 405, process.hrtime.bigint());
    const methods = new Set([...(await metrics.registry.metrics()).matchAll(/orderline_http_request_duration_seconds_count\{method="([^"]+)"/g)].map((m) => m[1]));
    expect([...methods].every((m) => ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'UNPARSED', 'OTHER'].includes(m))).toBe(true);
    expect(methods).toContain('OTHER');
  });
});
