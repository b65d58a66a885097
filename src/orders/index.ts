/**
 * The orders capability: the pure domain (versions, representations, transitions,
 * merge patch, cursor, the write decision). No HTTP here: the REST binding lives in
 * `http/rest/`, GraphQL and realtime reuse the representations.
 */
export { VERSIONS, NEWEST, isVersion, deprecationOf, type ApiVersion, type Deprecation } from './versions';
export { toV1, toV2, totalCents, type OrderV1, type OrderV2 } from './representation';
export { canTransition, CANCELLABLE, TRANSITIONS } from './transitions';
export { applyMergePatch } from './mergePatch';
export { decodeCursor, encodeCursor } from './cursor';
export { parseCanonicalInteger, parseOrderId, ORDER_ID_MAX } from './orderId';
export { decideWrite, createFields, writableView, toFields, EMPTY_ORDER, type Decision, type CreateIntent, type ReplaceIntent, type PatchIntent, type CancelIntent, type WriteIntent, type WriteKind } from './decide';
