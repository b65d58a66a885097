/**
 * The orderline client SDK: the generated REST client (typed from the contract) plus
 * the behaviour a client team would otherwise write: an ETag cache, conditional
 * writes that reload and reapply on 412, a pager over `_links.next`, and creates and
 * cancels sent with an Idempotency-Key and retried safely (idempotency.ts).
 */
import { createRestClient, type RestClient } from '../../generated/sdk/rest';
import { EtagCache } from './etagCache';
import { idempotentFetch } from './idempotency';

export { EtagCache } from './etagCache';
export { idempotentFetch, type IdempotentFetchOptions } from './idempotency';
export { updateOrder, allOrders, OrderlineError } from './orders';
export { streamOrder, reconnectDelay, DEFAULT_BACKOFF, type OrderStream, type OrderStreamOptions, type WebSocketCtor } from './realtime';
export { createGraphqlClient, GraphqlRequestError, type GraphqlClient, type OperationName } from './graphql';
export type { RestClient };

export function createOrderlineClient(options: { baseUrl: string; token?: string; fetch?: typeof fetch; cacheSize?: number }): {
  api: RestClient;
  cache: EtagCache;
} {
  const cache = new EtagCache(options.cacheSize);
  // Creates and cancels carry an Idempotency-Key by default and are retried with it.
  const api = createRestClient({ baseUrl: options.baseUrl, token: options.token, fetch: idempotentFetch(options.fetch ?? globalThis.fetch) });
  api.use(cache.middleware());
  return { api, cache };
}
