import createClient, { type ClientOptions } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';
import { EtagCache } from './etagCache.js';
import { idempotentFetch } from './idempotency.js';

/** openapi-fetch's client over the contract's `paths`: every REST operation, typed. */
export type RestClient = ReturnType<typeof createClient<paths>>;

export interface RestClientOptions {
  /** The service's origin, e.g. `https://orders.example.com` (no trailing path). */
  baseUrl: string;
  /** Opaque bearer token bound to an account; sent as `Authorization: Bearer <token>`. */
  token?: string | undefined;
  /** A fetch to use instead of the platform's (tests, proxies, instrumentation). */
  fetch?: ClientOptions['fetch'] | undefined;
  /** Extra headers sent with every request (e.g. `Api-Version`). */
  headers?: Record<string, string> | undefined;
}

/** A client for every REST operation of the contract, typed from it; no behaviour added. */
export function createRestClient(options: RestClientOptions): RestClient {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    headers: { ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}), ...options.headers },
  });
}

/**
 * The REST client with the ETag cache installed: a repeated GET revalidates with
 * If-None-Match and a 304 is answered from the cache; a successful write drops what
 * is cached for its URL. Creates and cancels carry an Idempotency-Key by default and are
 * retried with it when their answer is lost (idempotency.ts). `cacheSize` bounds the
 * cache (default 500 responses); 0 leaves caching to the platform, the better choice in a
 * browser on another origin (etagCache.ts says why).
 */
export function createOrderlineClient(options: RestClientOptions & { cacheSize?: number | undefined }): { api: RestClient; cache: EtagCache } {
  const cache = new EtagCache(options.cacheSize);
  const inner = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const api = createRestClient({ ...options, fetch: idempotentFetch(inner) });
  api.use(cache.middleware());
  return { api, cache };
}
