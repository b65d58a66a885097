/**
 * Metrics with WORKERS>1: one scrape shows the whole instance.
 *
 * The primary serves the operator listener (metricsListener.ts) itself, so every scrape
 * lands on one process that can see all workers. Choice: prom-client's aggregation on the
 * primary, not a `worker` label on every series. A label would multiply series by the
 * worker count and still needs someone to collect each worker's; aggregation answers
 * every scrape with the instance's totals (counters and histograms summed, gauges by the
 * aggregator prom-client declares for them: event-loop lag averaged, versions `first`...),
 * which is what a rate() over the instance wants. Per-worker detail is given up; the
 * instance is what is scraped.
 *
 * Workers answer with prom-client's own responder and protocol (its registry as JSON over
 * the cluster IPC channel). The primary's side is ours, not prom-client's
 * `AggregatorRegistry.clusterMetrics()`, for two things that one cannot do:
 * - **A counter never goes down when a worker is replaced.** A summed counter that lost a
 *   dead worker's share would drop, and Prometheus reads any drop as a reset: `rate()` and
 *   `increase()` would jump by the whole instance's total. So the last counters and
 *   histograms each worker reported are kept when it exits ("retired") and added to every
 *   later scrape. What a worker counted after its last scrape is lost with it: the sum is
 *   low by that much, but it never falls. Gauges of an exited worker are dropped (a gauge
 *   is a reading of a live process).
 * - **A worker that dies or hangs during a scrape does not fail it.** prom-client waits for
 *   every worker it asked and fails the scrape after 5 s; here an exited worker counts
 *   through its retired share, and one that has not answered within SCRAPE_WAIT_MS counts
 *   with what it reported last.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, Registry } from 'prom-client';
import type { Metrics } from './metrics';

/** The message types of prom-client's own cluster aggregation (AggregatorRegistry), which workers answer. */
const REQUEST = 'prom-client:getMetricsReq';
const REPLY = 'prom-client:getMetricsRes';
/** How long a scrape waits for a worker before counting it with its previous answer. */
const SCRAPE_WAIT_MS = 3000;
/** Retired shares are summed into one once there are this many (a worker crash-looping must not grow every scrape). */
const RETIRED_COMPACT_AT = 8;

/** One metric of a registry's JSON (`getMetricsAsJSON`), as it crosses the IPC channel. */
interface MetricJson {
  name: string;
  type: string;
  /** How the workers' values combine (prom-client's: sum, average, min, max, first, omit). */
  aggregator?: string;
}
type RegistryJson = MetricJson[];

/**
 * Where prom-client's way of combining its process metrics misleads a dashboard of the
 * instance: the start time, which it leaves out, is the oldest live worker's (the
 * instance's uptime); the file-descriptor limit is each process's own, not a sum (an alert
 * on open over max must fire when one worker nears its own limit).
 */
const INSTANCE_AGGREGATORS: Readonly<Partial<Record<string, string>>> = { process_start_time_seconds: 'min', process_max_fds: 'min' };
const withInstanceAggregators = (json: RegistryJson): RegistryJson =>
  json.map((m) => {
    const aggregator = INSTANCE_AGGREGATORS[m.name];
    return aggregator ? { ...m, aggregator } : m;
  });

interface Reply {
  requestId: number;
  metrics: RegistryJson[];
  error?: string;
}
/** A worker's answer: its registries, or an `error` (then no `metrics`: it counts with what it reported last). */
const isReply = (m: unknown): m is Reply => typeof m === 'object' && m !== null && 'type' in m && m.type === REPLY && 'requestId' in m && typeof m.requestId === 'number';

/** A registry's counters and histograms: what only grows while a process lives. */
const monotone = (json: RegistryJson): RegistryJson => json.filter((m) => m.type === 'counter' || m.type === 'histogram');

/** Primary: the whole instance's scrape (every worker's registry, aggregated, and the shares of workers that exited) and its content type. */
export function instanceScrape(): { scrape: () => Promise<string>; contentType: string } {
  const lastSeen = new Map<number, RegistryJson>();
  /** The counters and histograms of exited workers: registry JSON as prom-client's aggregate takes it. */
  let retired: object[][] = [];
  const scrapes = new Map<number, { pending: Set<number>; finish: () => void }>();
  let nextId = 0;

  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isReply(message)) return;
    const scrape = scrapes.get(message.requestId);
    if (!scrape?.pending.has(worker.id)) return;
    if (!message.error && Array.isArray(message.metrics)) lastSeen.set(worker.id, withInstanceAggregators(message.metrics.flat()));
    scrape.pending.delete(worker.id);
    if (scrape.pending.size === 0) scrape.finish();
  });
  cluster.on('exit', (worker: Worker) => {
    const seen = lastSeen.get(worker.id);
    lastSeen.delete(worker.id);
    if (seen) retire(monotone(seen));
    for (const scrape of scrapes.values()) {
      if (scrape.pending.delete(worker.id) && scrape.pending.size === 0) scrape.finish();
    }
  });

  let compacting = false;
  const retire = (share: RegistryJson) => {
    retired.push(share);
    if (compacting || retired.length < RETIRED_COMPACT_AT) return;
    // One compaction at a time; `retired` is only appended to meanwhile, so the shares retired since stay as they are.
    compacting = true;
    const batch = retired.slice();
    void AggregatorRegistry.aggregate(batch)
      .getMetricsAsJSON()
      .then((sum) => {
        retired = [sum, ...retired.slice(batch.length)];
      })
      .finally(() => (compacting = false));
  };

  const scrape = () =>
    new Promise<string>((resolve, reject) => {
      const requestId = nextId++;
      const pending = new Set<number>();
      const finish = () => {
        clearTimeout(timer);
        scrapes.delete(requestId);
        // Every live worker with what it reported last (this scrape's answer where it gave one), and every exited one's share.
        AggregatorRegistry.aggregate([...lastSeen.values(), ...retired])
          .metrics()
          .then(resolve, reject);
      };
      const timer = setTimeout(finish, SCRAPE_WAIT_MS);
      scrapes.set(requestId, { pending, finish });
      for (const worker of Object.values(cluster.workers ?? {})) {
        if (!worker?.isConnected()) continue;
        pending.add(worker.id);
        worker.send({ type: REQUEST, requestId });
      }
      if (pending.size === 0) finish();
    });
  return { scrape, contentType: Registry.PROMETHEUS_CONTENT_TYPE };
}

/** Worker: lends `metrics.registry` to the primary's aggregation. */
export function lendRegistryToPrimary(metrics: Metrics): void {
  new AggregatorRegistry(); // installs prom-client's worker-side responder
  AggregatorRegistry.setRegistries([metrics.registry]);
}
