/**
 * `@orderline/sdk/rest`: the typed REST client (openapi-fetch over the contract's
 * paths, If-Match required on writes) plus the behaviour a client team would otherwise
 * write: one error type, an ETag cache, safe retries honouring Retry-After, timeouts and
 * cancellation, conditional writes that reload and reapply on 412, a pager over
 * `_links.next`, and creates and cancels sent with an Idempotency-Key.
 *
 * @packageDocumentation
 */
export { createRestClient, createOrderlineClient, unwrap, type RestClient, type RestClientOptions, type OrderlineClientOptions, type OrderlinePaths } from './client.js';
export { EtagCache } from './etagCache.js';
export { retryFetch, randomUuid, type RetryOptions, type RequestFetch, type TokenSource } from './transport.js';
export { OrderlineError, type OrderlineErrorCode, type OrderlineErrorInit, type ProblemCode, type GraphqlErrorCode, type RealtimeErrorCode, type ClientErrorCode, type GraphqlErrorJson, type Problem } from './errors.js';
export { updateOrder, listOrders, orderPages, allOrders, type Order, type OrderPatch, type OrderStatus, type Currency, type OrderPage, type PageOptions, type CallOptions, type UpdateOrderOptions } from './orders.js';
export type { paths, components } from './generated/openapi.js';
