import { createHash } from 'node:crypto';
import type { Handlers } from '../../../generated/openapi/handlers';
import { docsHtml } from '../../../generated/openapi/docs';
import { evaluate } from '../conditional';
import type { HandlerContext } from './dispatch';
import type { Metrics } from '../metrics';
import { problem, PROBLEM_MEDIA_TYPE } from '../problem';

/** A dependency readiness probe: true when reachable. */
export type Probe = () => Promise<boolean>;

/** The reference is the same for everyone: a shared cache may keep it for five minutes. */
export const DOCS_CACHE_CONTROL = 'public, max-age=300';
const DOCS_ETAG = `"${createHash('sha256').update(docsHtml).digest('base64url').slice(0, 22)}"`;

/** /healthz (alive), /readyz (every dependency answers), /metrics (Prometheus text), /docs. */
export function healthHandlers(deps: { metrics: Metrics; probes: Record<string, Probe> }): Pick<
  Handlers<HandlerContext>,
  'getHealth' | 'getReady' | 'getMetrics' | 'getDocs'
> {
  return {
    async getDocs(req) {
      const headers = { ETag: DOCS_ETAG, 'Cache-Control': DOCS_CACHE_CONTROL };
      const outcome = evaluate({ method: 'GET', ifNoneMatch: req.headers['If-None-Match'], current: { selected: DOCS_ETAG, all: [DOCS_ETAG] } });
      if (outcome === 'not_modified') return { status: 304, headers };
      return { status: 200, headers, contentType: 'text/html', body: docsHtml };
    },
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
      return { status: 200, contentType: 'text/plain', body: await deps.metrics.registry.metrics() };
    },
  };
}
