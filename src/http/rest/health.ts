import type { OperationHandlers } from './operations';
import { problem, PROBLEM_MEDIA_TYPE, STORE_RETRY_AFTER_S } from '../problem';

/** A dependency readiness probe: true when reachable. */
export type Probe = () => Promise<boolean>;

/** /healthz (alive), /readyz (every dependency answers). Metrics are on the operator listener (../metricsListener.ts), not here. The reference is in docs.ts. */
export function healthHandlers(deps: { probes: Record<string, Probe> }): Pick<OperationHandlers, 'getHealth' | 'getReady'> {
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
        headers: { 'Retry-After': String(STORE_RETRY_AFTER_S) },
        contentType: PROBLEM_MEDIA_TYPE,
        body: { ...problem('SERVICE_UNAVAILABLE', `Not ready: ${failed.join(', ')} unreachable`), checks },
      };
    },
  };
}
