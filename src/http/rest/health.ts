import type { OperationHandlers } from './operations';
import { problem, PROBLEM_MEDIA_TYPE } from '../problem';

/** A dependency readiness probe: true when reachable. */
export type Probe = () => Promise<boolean>;

/**
 * How long /readyz waits for a probe: one that has not answered by then counts as
 * unreachable. A hung PostgreSQL would otherwise hold the answer for the store's own
 * connect and query timeouts (5 and 10 s by default), past a load balancer's or
 * Kubernetes' probe timeout (1 s by default there, often a few): it would see a timeout,
 * where a 503 naming the dependency says more.
 */
export const READY_PROBE_MS = 900;

function within(probe: Probe, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, ms, false)));
  return Promise.race([probe().catch(() => false), late]).finally(() => clearTimeout(timer));
}

/** /healthz (alive), /readyz (every dependency answers). Metrics are on the operator listener (../metricsListener.ts), not here. The reference is in docs.ts. */
export function healthHandlers(deps: { probes: Record<string, Probe>; probeMs?: number }): Pick<OperationHandlers, 'getHealth' | 'getReady'> {
  const probeMs = deps.probeMs ?? READY_PROBE_MS;
  return {
    async getHealth() {
      return { status: 200, contentType: 'application/json', body: { status: 'ok' } };
    },
    async getReady() {
      const names = Object.keys(deps.probes).sort();
      const results = await Promise.all(names.map((n) => within(deps.probes[n], probeMs)));
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
  };
}
