/**
 * The REST binding: every operation of contracts/openapi.yaml, implemented by the
 * order, health and docs handlers and dispatched from the generated route table.
 */
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Handlers } from '../../../generated/openapi/handlers';
import type { OrderEvent, Store } from '../../store';
import type { Metrics } from '../metrics';
import { dispatchRouter, type HandlerContext } from './dispatch';
import { docsHandlers } from './docs';
import { healthHandlers, type Probe } from './health';
import { orderHandlers, type OrderReads } from './handlers';

export type { HandlerContext } from './dispatch';
export { orderReads, type OrderReads } from './handlers';
export { orderReadRoute } from './edgeRead';

export interface RestDeps {
  store: Store;
  metrics: Metrics;
  /** Readiness probes of /readyz, by dependency name. */
  probes: Record<string, Probe>;
  /** Called after each committed write with its event (the realtime hub listens here). */
  onEvent?: (event: OrderEvent) => void;
  bodyLimit: number;
  /** Resolves the bearer token (401 otherwise); runs before any validation. */
  authenticate: Middleware;
  /** IDEMPOTENCY_TTL_S in milliseconds. */
  idempotencyTtlMs: number;
  /** The order read's rules and representation cache, when shared with the edge (edgeRead.ts). */
  reads?: OrderReads;
}

export function restRouter(deps: RestDeps): Router {
  // Every operation of the contract: a missing or mistyped one fails `npm run typecheck`.
  const handlers: Handlers<HandlerContext> = {
    ...healthHandlers({ metrics: deps.metrics, probes: deps.probes }),
    ...orderHandlers({ store: deps.store, metrics: deps.metrics, onEvent: deps.onEvent, reads: deps.reads }),
    ...docsHandlers(),
  };
  return dispatchRouter(handlers, { bodyLimit: deps.bodyLimit, authenticate: deps.authenticate, idempotency: { store: deps.store, ttlMs: deps.idempotencyTtlMs } });
}
