import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The service's Prometheus metrics, in one registry per app instance (tests build
 * many apps in one process; a global registry would mix them).
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration = new Histogram({
    name: 'orderline_http_request_duration_seconds',
    help: 'HTTP request duration by route template, method and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  /**
   * Spec 9.4: read volume of a deprecated field, per client (account). Recorded only through
   * `FieldReadTally` (fieldReads.ts), which bounds the `account` label to the top accounts
   * plus `(other)` and keeps the exact per-account counts in the store.
   */
  readonly deprecatedReads = new Counter({
    name: 'orderline_deprecated_field_reads_total',
    help: 'Responses that carried a deprecated field, by account and field',
    labelNames: ['account', 'field'] as const,
    registers: [this.registry],
  });

  /** Stream connections closed because their pending send passed MAX_BUFFER_BYTES. */
  readonly streamBackpressure = new Counter({
    name: 'orderline_stream_backpressure_closes_total',
    help: 'SSE or WebSocket connections closed for backpressure (pending send over MAX_BUFFER_BYTES)',
    registers: [this.registry],
  });

  /** /graphql requests by outcome: `ok` or the error's `extensions.code` (rejections by the cost rule show as GRAPHQL_VALIDATION_FAILED). */
  readonly graphqlRequests = new Counter({
    name: 'orderline_graphql_requests_total',
    help: 'GraphQL requests by outcome: ok, or the first error code (GRAPHQL_VALIDATION_FAILED, PERSISTED_QUERY_NOT_FOUND, ...)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Redis bus and shared-registry failures (publish, subscribe, connection): each one made good by a catch-up or a fallback, but worth an alert. */
  readonly busErrors = new Counter({
    name: 'orderline_bus_errors_total',
    help: 'Redis errors seen by the bus or the shared APQ registry (connection drops, failed publishes or lookups)',
    registers: [this.registry],
  });

  /**
   * Errors of the PostgreSQL pool outside any request (an idle connection the server
   * dropped: the pool replaces it) and statements that met an unreachable server
   * (answered 503 with Retry-After): worth an alert either way.
   */
  readonly storeErrors = new Counter({
    name: 'orderline_store_errors_total',
    help: 'PostgreSQL errors: pool errors outside requests (dropped idle connections) and statements that found the server unreachable',
    registers: [this.registry],
  });

  /** Times the hubs read the event table because the bus may have lost messages (a reconnect). */
  readonly busCatchUps = new Counter({
    name: 'orderline_bus_catchups_total',
    help: 'Catch-ups from the event table after the Redis bus reconnected or a peer reported a failed publish',
    registers: [this.registry],
  });

  /** The text one scrape of the operator listener answers in a lone process (a cluster's primary aggregates instead: clusterMetrics.ts). */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }
}

/**
 * The request-duration histogram's labelled children, looked up once per (method, route,
 * status) and kept: prom-client would otherwise hash the label object on every request.
 * Labels are route templates, never raw paths (bounded cardinality).
 */
export class HttpTimer {
  private readonly children = new Map<string, { observe(v: number): void }>();

  constructor(private readonly metrics: Metrics) {}

  /** Records one request that started at `started` (process.hrtime.bigint()). */
  observe(method: string, route: string, status: number, started: bigint): void {
    const key = `${method} ${route} ${status}`;
    let child = this.children.get(key);
    if (!child) {
      child = this.metrics.httpDuration.labels({ method, route, status: String(status) });
      this.children.set(key, child);
    }
    child.observe(Number(process.hrtime.bigint() - started) / 1e9);
  }
}
