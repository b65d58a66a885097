/**
 * Safe retries for creates: a fetch wrapper that gives every `POST /orders`
 * (any version) and `POST .../cancel` an `Idempotency-Key` (a random UUID) unless the
 * caller set one, and retries the very same request, key included, when the answer was
 * lost (network error) or says "try again" (409 IDEMPOTENCY_KEY_IN_USE, 429, 503),
 * waiting `Retry-After` (capped) plus jitter. The server replays the first outcome, so a
 * retry never creates a second order.
 */
const IDEMPOTENT = /\/(v\d+\/)?orders(\/\d+\/cancel)?$/;
const RETRY_STATUSES = new Set([409, 429, 503]);

/** The fetch openapi-fetch calls: one Request in, one Response out. */
export type RequestFetch = (input: Request) => Promise<Response>;

export interface IdempotentFetchOptions {
  /** Attempts in all (default 3). */
  attempts?: number | undefined;
  /** Longest wait between attempts, ms (default 5000). */
  maxDelayMs?: number | undefined;
  /** For tests. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
}

export function idempotentFetch(inner: RequestFetch, options: IdempotentFetchOptions = {}): RequestFetch {
  const { attempts = 3, maxDelayMs = 5000, sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms)) } = options;
  return async (request) => {
    if (request.method !== 'POST' || !IDEMPOTENT.test(new URL(request.url).pathname)) return inner(request);
    if (!request.headers.has('idempotency-key')) request.headers.set('idempotency-key', crypto.randomUUID());
    for (let attempt = 1; ; attempt++) {
      let res: Response | undefined;
      try {
        res = await inner(request.clone());
      } catch (err) {
        if (attempt >= attempts) throw err;
      }
      if (res && (!RETRY_STATUSES.has(res.status) || attempt >= attempts)) return res;
      if (res && res.status === 409 && !(await res.clone().text()).includes('IDEMPOTENCY_KEY_IN_USE')) return res; // a domain conflict: final
      const after = Number(res?.headers.get('retry-after'));
      const base = Number.isFinite(after) && after > 0 ? after * 1000 : 200 * 2 ** attempt;
      await sleep(Math.min(maxDelayMs, base) + Math.random() * 100);
    }
  };
}
