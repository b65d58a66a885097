/**
 * The REST binding: every operation of contracts/openapi.yaml, implemented by the
 * order, health and docs handlers and bound to the generated route table.
 */
import type { OrderEvent, Store } from '../../store';
import type { FieldReadTally } from '../fieldReads';
import { bindRoutes, type OperationHandlers } from './operations';
import { docsHandlers } from './docs';
import { healthHandlers, type Probe } from './health';
import { orderHandlers, type OrderReads } from './handlers';

export type { AccountContext, HandlerContext, Operation } from './operations';
export { orderReads, type OrderReads } from './handlers';

export interface RestDeps {
  store: Store;
  /** Counts responses carrying a deprecated field, per account, so a field is removed only once its readers have moved. */
  fieldReads: FieldReadTally;
  /** Readiness probes of /readyz, by dependency name. */
  probes: Record<string, Probe>;
  /** Called after each committed write with its event (the realtime hub listens here). */
  onEvent?: (event: OrderEvent) => void;
  /** IDEMPOTENCY_TTL_S in milliseconds. */
  idempotencyTtlMs: number;
  /** The order read's rules and representation cache (handlers.ts `orderReads`). */
  reads?: OrderReads;
}

/** Every operation of the contract, bound: a missing or mistyped handler fails `npm run typecheck`. */
export function restOperations(deps: RestDeps) {
  const handlers: OperationHandlers = {
    ...healthHandlers({ probes: deps.probes }),
    ...orderHandlers({ store: deps.store, fieldReads: deps.fieldReads, onEvent: deps.onEvent, reads: deps.reads }),
    ...docsHandlers(),
  };
  return bindRoutes(handlers, { idempotency: { store: deps.store, ttlMs: deps.idempotencyTtlMs } });
}
