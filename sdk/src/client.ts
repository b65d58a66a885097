import createClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';
import { EtagCache } from './etagCache.js';
import { OrderlineError, errorFromResponse, retryAfterMs, type Problem } from './errors.js';
import { baseUrlOf, retryFetch, tokenOf, timed, withTimeout, type RequestFetch, type RetryOptions, type TokenSource } from './transport.js';

/**
 * A write operation with `If-Match` made a required header. The contract marks it
 * optional (a missing one is answered 428, not 400, so the server's validators must let
 * it through), but no write succeeds without it: here, leaving it out does not compile.
 */
type IfMatchRequired<Op> = Op extends { parameters: { header?: infer H } }
  ? Omit<Op, 'parameters'> & { parameters: Omit<Op['parameters'], 'header'> & { header: Omit<NonNullable<H>, 'If-Match'> & { 'If-Match': string } } }
  : Op;

/**
 * The contract's `paths` as the SDK types them: PUT, PATCH and `POST .../cancel`
 * require `If-Match` (see IfMatchRequired); everything else is the contract's.
 */
export type OrderlinePaths = {
  [P in keyof paths]: {
    [M in keyof paths[P]]: M extends 'put' | 'patch' ? IfMatchRequired<paths[P][M]> : M extends 'post' ? (P extends `${string}/cancel` ? IfMatchRequired<paths[P][M]> : paths[P][M]) : paths[P][M];
  };
};

/** openapi-fetch's client over the contract's paths: every REST operation, typed. */
export type RestClient = Client<OrderlinePaths>;

export interface RestClientOptions {
  /** The service's URL, e.g. `https://orders.example.com`; a path prefix is kept (`https://example.com/orderline`), and in a page a path such as `/api` is resolved against the page's URL. */
  baseUrl: string;
  /**
   * The bearer token bound to an account, sent as `Authorization: Bearer <token>`; or a
   * function returning the current one, called before every request (token rotation,
   * refresh: return the new token and the next request carries it).
   */
  token?: TokenSource | undefined;
  /** A fetch to use instead of the platform's (tests, proxies, instrumentation). */
  fetch?: ClientOptions['fetch'] | undefined;
  /** Extra headers sent with every request (e.g. `Api-Version`). */
  headers?: Record<string, string> | undefined;
}

/**
 * The contract's only PATCH media type is `application/merge-patch+json` (RFC 7396);
 * openapi-fetch sends `application/json` unless told otherwise, which the server answers
 * 415. This sets it on every PATCH whose body the caller did not type otherwise.
 */
const mergePatch: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'PATCH' || request.headers.get('content-type') !== 'application/json') return undefined;
    request.headers.set('content-type', 'application/merge-patch+json');
    return request;
  },
};

const bearer = (token: TokenSource | undefined): Middleware => ({
  async onRequest({ request }) {
    if (request.headers.has('authorization')) return undefined;
    const current = await tokenOf(token);
    if (current) request.headers.set('authorization', `Bearer ${current}`);
    return request;
  },
});

/**
 * A client for every REST operation of the contract, typed from it (If-Match required on
 * writes), with the token and the merge-patch media type set; otherwise openapi-fetch as
 * it is: an error answer comes back as `{ error, response }`.
 */
export function createRestClient(options: RestClientOptions): RestClient {
  const api = createClient<OrderlinePaths>({
    baseUrl: baseUrlOf(options.baseUrl),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  api.use(bearer(options.token), mergePatch);
  return api;
}

/**
 * Every failure as an OrderlineError: an error answer (status >= 400) is thrown with its
 * problem; no answer at all becomes NETWORK_ERROR; a timeout is TIMEOUT; an abort
 * rejects with the signal's reason (an `AbortError`), as fetch does.
 */
const throwing: Middleware = {
  async onResponse({ response, options }) {
    // An error status; or a success read as JSON that is not JSON (a proxy's or portal's HTML page): BAD_RESPONSE, not the parser's SyntaxError.
    if (response.status >= 400 || (options.parseAs == 'json' && !/json/.test(response.headers.get('content-type') ?? 'json'))) throw await errorFromResponse(response);
    return undefined;
  },
  onError({ request, error }) {
    // Thrown as they are (an abort's reason may be a DOMException from another realm, which openapi-fetch would not pass on).
    if (error instanceof OrderlineError || request.signal.aborted) throw error;
    return new OrderlineError(0, undefined, { source: 'client', code: 'NETWORK_ERROR', message: error instanceof Error ? error.message : String(error), cause: error });
  },
};

/** Applies a timeout to each call, its retries included. */
function timing(inner: RequestFetch, timeoutMs: number | undefined): RequestFetch {
  if (!timed(timeoutMs)) return inner;
  return async (request) => {
    const t = withTimeout(request.signal, timeoutMs);
    try {
      return await inner(new Request(request, t.signal ? { signal: t.signal } : {}));
    } finally {
      t.done();
    }
  };
}

export interface OrderlineClientOptions extends RestClientOptions {
  /** Responses the ETag cache holds (default 500). */
  cacheSize?: number | undefined;
  /**
   * The ETag cache (default on). In a browser the HTTP cache revalidates the same
   * responses by itself: `false` leaves it to the browser.
   */
  cache?: boolean | undefined;
  /** Retries of what is safe to retry (see {@link retryFetch}); `false`: none. */
  retry?: RetryOptions | false | undefined;
  /** Fails a call (its retries included) with OrderlineError TIMEOUT after this many ms (absent or 0: never). Per call, pass `signal`. */
  timeoutMs?: number | undefined;
}

/**
 * The REST client with the SDK's behaviour: every failure thrown as an OrderlineError
 * (so a resolved call has its `data`); the ETag cache (a repeated GET revalidates with
 * If-None-Match and a 304 is answered from the cache; a successful write drops what is
 * cached for its URL); safe retries on network errors, 429 and 503 honouring
 * Retry-After ({@link retryFetch}), creates and cancels sent with an Idempotency-Key; an
 * optional timeout; `signal` on any call cancels it and its retries.
 */
export function createOrderlineClient(options: OrderlineClientOptions): { api: RestClient; cache: EtagCache } {
  const cache = new EtagCache(options.cacheSize);
  const inner: RequestFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const retried = options.retry === false ? inner : retryFetch(inner, options.retry);
  const api = createRestClient({ ...options, fetch: timing(retried, options.timeoutMs) });
  // Registered first, so its onResponse runs last (after the cache turned a 304 into the cached 200).
  api.use(throwing);
  if (options.cache !== false) api.use(cache.middleware());
  return { api, cache };
}

/**
 * The data of a call, or an OrderlineError: for a client from createRestClient (which
 * returns error answers as values), and to narrow `data` in either client.
 */
export async function unwrap<D>(call: Promise<{ data?: D; error?: unknown; response: Response }> | { data?: D; error?: unknown; response: Response }): Promise<D> {
  const { data, error, response } = await call;
  const requestId = response.headers.get('x-request-id') ?? undefined;
  if (response.status >= 400) {
    const problem = error && typeof error === 'object' ? (error as Partial<Problem>) : undefined;
    throw new OrderlineError(response.status, problem, { requestId, retryAfterMs: retryAfterMs(response.headers.get('retry-after')) });
  }
  if (data === undefined) throw new OrderlineError(response.status, undefined, { code: 'BAD_RESPONSE', message: 'the answer has no body', requestId });
  return data;
}
