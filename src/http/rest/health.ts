import type { OperationHandlers } from './operations';
import type { Metrics } from '../metrics';
import { problem, PROBLEM_MEDIA_TYPE } from '../problem';

/** A dependency readiness probe: true when reachable. */
export type Probe = () => Promise<boolean>;

/** /healthz (alive), /readyz (every dependency answers), /metrics (Prometheus text). The reference is in docs.ts. */
export function healthHandlers(deps: { metrics: Metrics; probes: Record<string, Probe> }): Pick<OperationHandlers, 'getHealth' | 'getReady' | 'getMetrics'> {
  return {
    async getHealth() {
      return { status: 200, contentType: 'application/json', body: { status: 'ok' } };
    },
    async getReady() {
      const names = Object.keys(deps.probes).sort();
      const results = await Promise.all(names.map((n) => deps.probes[n]().catch(() => false)));
      const checks = Object.fromEntries(names.map((n, i) => [n, results[i]]));
      if (results.every(Boolean)) return { status: 200, contentType: 'application/json', body: { status: 'ready', checks } };
      const failed = names.filter((_, i) => !results[i]);
      return {
        status: 503,
        headers: { 'Retry-After': '5' },
        contentType: PROBLEM_MEDIA_TYPE,
        body: { ...problem('SERVICE_UNAVAILABLE', `Not ready: ${failed.join(', ')} unreachable`), checks },
      };
    },
    async getMetrics() {
      // prom-client's exposition type (text/plain; version=0.0.4; charset=utf-8), refining the contract's text/plain.
      return { status: 200, headers: { 'Content-Type': deps.metrics.registry.contentType }, contentType: 'text/plain', body: await deps.metrics.scrape() };
    },
  };
}
