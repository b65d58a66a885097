/** The orders capability: its handlers and the rules other folders may reuse. */
export { orderHandlers, etagOf, CACHE_CONTROL, VARY, type OrderDeps } from './handlers';
export { represent, toV1, toV2, totalCents, CANCELLABLE } from './representation';
export { canTransition, TRANSITIONS } from './transitions';
