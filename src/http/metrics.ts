import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type HistogramConfiguration } from 'prom-client';

type DurationLabel = 'method' | 'route' | 'status';

/** What the scrape-time gauges read (`Metrics.watch`): the realtime capability's counts, the public listener's connections. */
interface Watched {
  streams?: () => { sse: number; ws: number; topics: number };
  connections?: () => number;
  requests?: () => number;
}

/** One series of the duration histogram: its labels and per-bucket (not cumulative) counts. */
interface Series {
  readonly labels: Readonly<Record<DurationLabel, string>>;
  /** Observations per bucket, by index into the bounds; the last slot counts those above every bound. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * The request-duration histogram: prom-client's Histogram (registered, scraped, aggregated
 * across workers as any other), recorded through `record` instead of `observe`. A labelled
 * child's `observe` checks its labels against the label names and hashes them on every
 * call, about 0.6 µs, 1 % of a /graphql request; `record` finds its series in one map
 * lookup and adds to a typed array (under 0.05 µs). `get` answers with the values
 * prom-client's own `get` would give for the same observations (metrics.test.ts compares
 * both, text and JSON, and the cluster aggregation). Only `record` is scraped: an
 * observation through the inherited `observe` would not be.
 */
export class DurationHistogram extends Histogram<DurationLabel> {
  /** "route method status" -> series, in the order first recorded (prom-client lists its series so). */
  private series = new Map<string, Series>();
  private readonly bounds: readonly number[];
  /** The same histogram, unregistered and never observed: prom-client's own name, help, type and aggregator for the scrape. */
  private readonly shape: Histogram<DurationLabel>;

  constructor(config: HistogramConfiguration<DurationLabel> & { buckets: readonly number[] }) {
    super({ ...config, buckets: [...config.buckets] });
    this.bounds = [...config.buckets].sort((a, b) => a - b);
    this.shape = new Histogram({ ...config, buckets: [...config.buckets], registers: [] });
  }

  /** One observation of `seconds` for (method, route, status). */
  record(method: string, route: string, status: number, seconds: number): void {
    const key = `${route} ${method} ${status}`;
    let series = this.series.get(key);
    if (!series) {
      series = { labels: { method, route, status: String(status) }, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
      this.series.set(key, series);
    }
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]) i++;
    series.counts[i]++;
    series.sum += seconds;
    series.count++;
  }

  override async get(): ReturnType<Histogram<DurationLabel>['get']> {
    const base = await this.shape.get();
    const name = base.name;
    const values: typeof base.values = [];
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += counts[i];
        values.push({ value: cumulative, metricName: `${name}_bucket`, labels: Object.assign({ le: this.bounds[i] }, labels) });
      }
      values.push(
        { value: count, metricName: `${name}_bucket`, labels: Object.assign({ le: '+Inf' }, labels) },
        { value: sum, metricName: `${name}_sum`, labels: { ...labels } },
        { value: count, metricName: `${name}_count`, labels: { ...labels } },
      );
    }
    return { ...base, values };
  }

  /**
   * The text scrape's source: prom-client's registry prefers a metric's
   * `getForPromString` to `get` when it has one (Histogram does, undeclared in its
   * types). Same values as `get`, every label in `labels`, which the text writer accepts;
   * metrics.test.ts holds the text to prom-client's own.
   */
  getForPromString(): ReturnType<Histogram<DurationLabel>['get']> {
    return this.get();
  }

  /** prom-client's constructor calls this too, before this class's fields are set: it assigns rather than clears. */
  override reset(): void {
    super.reset();
    this.series = new Map<string, Series>();
  }
}

/**
 * The service's Prometheus metrics, in one registry per app instance (tests build
 * many apps in one process; a global registry would mix them).
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration = new DurationHistogram({
    name: 'orderline_http_request_duration_seconds',
    help: 'HTTP request duration by route template, method and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  /**
   * The read volume of a deprecated field, per client (account). Recorded only through
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

  /** WebSocket connections cut for leaving a ping unanswered (WS_HEARTBEAT_S): clients gone without a goodbye. */
  readonly wsHeartbeatTimeouts = new Counter({
    name: 'orderline_ws_heartbeat_timeouts_total',
    help: 'WebSocket connections cut because the previous ping was still unanswered (WS_HEARTBEAT_S)',
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

  /** What the gauges below read at scrape time (`watch`): nothing is counted on the request path for them. */
  private readonly held: Watched = {};

  /** Open realtime streams by transport: SSE streams, WebSocket connections (/orders and /graphql together). */
  readonly openStreams = new Gauge({
    name: 'orderline_open_streams',
    help: 'Open realtime streams on this process, by transport: sse (event streams), ws (WebSocket connections, /orders and /graphql)',
    labelNames: ['transport'] as const,
    registers: [this.registry],
    collect: () => {
      const s = this.held.streams?.();
      if (!s) return;
      this.openStreams.set({ transport: 'sse' }, s.sse);
      this.openStreams.set({ transport: 'ws' }, s.ws);
    },
  });

  /** Order topics whose replay ring is loaded (one per order with a subscriber, kept a while after the last leaves). */
  readonly realtimeTopics = new Gauge({
    name: 'orderline_realtime_topics',
    help: 'Order topics with a loaded replay ring on this process',
    registers: [this.registry],
    collect: () => {
      const s = this.held.streams?.();
      if (s) this.realtimeTopics.set(s.topics);
    },
  });

  /** Open connections of the public listener (idle keep-alive and upgraded ones included). */
  readonly openConnections = new Gauge({
    name: 'orderline_open_connections',
    help: 'Open TCP connections of the public HTTP listener (keep-alive and WebSocket ones included)',
    registers: [this.registry],
    collect: () => {
      const n = this.held.connections?.();
      if (n !== undefined) this.openConnections.set(n);
    },
  });

  /** Requests of the public listener whose answer is not yet sent (event streams included), counted at scrape time. */
  readonly requestsInFlight = new Gauge({
    name: 'orderline_http_requests_in_flight',
    help: 'HTTP requests of the public listener being answered (one per connection with a response under way; event streams included)',
    registers: [this.registry],
    collect: () => {
      const n = this.held.requests?.();
      if (n !== undefined) this.requestsInFlight.set(n);
    },
  });

  /** Where the gauges read: the realtime capability's counts, the listener's connections and requests. */
  watch(sources: Watched): void {
    Object.assign(this.held, sources);
  }

  /** The text one scrape of the operator listener answers in a lone process (a cluster's primary aggregates instead: clusterMetrics.ts). */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }
}

/**
 * Times requests into the duration histogram. Labels are route templates, never raw paths
 * (bounded cardinality).
 */
/**
 * The methods the duration metric names. A client picks the method, and node parses about
 * thirty (PROPFIND, MKCALENDAR, LINK...) that no route serves: each would be its own series
 * per route and status. Any other is `OTHER` (the log line keeps the method sent).
 */
const LABELLED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'UNPARSED']);

export class HttpTimer {
  constructor(private readonly metrics: Metrics) {}

  /** Records one request that started at `started` (process.hrtime.bigint()). */
  observe(method: string, route: string, status: number, started: bigint): void {
    this.metrics.httpDuration.record(LABELLED_METHODS.has(method) ? method : 'OTHER', route, status, Number(process.hrtime.bigint() - started) / 1e9);
  }
}
