/**
 * `@orderline/sdk/rest`: the typed REST client (openapi-fetch over the contract's
 * paths) plus the behaviour a client team would otherwise write: an ETag cache,
 * conditional writes that reload and reapply on 412, a pager over `_links.next`, and
 * creates and cancels sent with an Idempotency-Key and retried safely.
 */
export { createRestClient, createOrderlineClient, type RestClient, type RestClientOptions } from './client.js';
export { EtagCache } from './etagCache.js';
export { idempotentFetch, type IdempotentFetchOptions, type RequestFetch } from './idempotency.js';
export { updateOrder, allOrders, OrderlineError, type Order, type OrderPatch, type Problem } from './orders.js';
export type { paths, components } from './generated/openapi.js';
