/**
 * Metrics with WORKERS>1: one scrape shows the whole instance.
 *
 * The primary serves the operator listener (metricsListener.ts) itself, so every scrape
 * lands on one process that can see all workers. Choice: prom-client's AggregatorRegistry
 * on the primary, not a `worker` label on every series. A label would multiply series by
 * the worker count and still needs someone to collect each worker's; aggregation answers
 * every scrape with the instance's totals (counters and histograms summed, gauges by the
 * aggregator prom-client declares for them: event-loop lag averaged, versions `first`...),
 * which is what a rate() over the instance wants. Per-worker detail is given up; the
 * instance is what is scraped.
 *
 * The primary's AggregatorRegistry asks every worker for its registry as JSON over the
 * cluster IPC channel (prom-client's own protocol), sums, and answers with the text.
 */
import { AggregatorRegistry } from 'prom-client';
import type { Metrics } from './metrics';

/** Primary: the whole instance's scrape (every worker's registry, aggregated) and its content type. */
export function instanceScrape(): { scrape: () => Promise<string>; contentType: string } {
  const aggregator = new AggregatorRegistry();
  return { scrape: () => aggregator.clusterMetrics(), contentType: aggregator.contentType };
}

/** Worker: lends `metrics.registry` to the primary's aggregation. */
export function lendRegistryToPrimary(metrics: Metrics): void {
  new AggregatorRegistry(); // installs prom-client's worker-side responder
  AggregatorRegistry.setRegistries([metrics.registry]);
}
