/**
 * Idempotency-Key on every operation whose contract declares the header (today POST /orders
 * and POST .../cancel, every version: safe retries of creates;
 * draft-ietf-httpapi-idempotency-key-header, Stripe's semantics).
 * Wraps the bound operation: before its handler runs, the account's key is claimed in the
 * store with a fingerprint of the request. A request its contract refuses (a 400) claims
 * nothing: it is answered as if it sent no key, so it cannot hold the key for a moment and
 * turn a concurrent valid retry into a 409. A replay answers the stored response with
 * `Idempotent-Replayed: true`; the same key for another request is 422; a key whose
 * first request still runs is 409 with Retry-After. A claimed request runs with the
 * claim in its context, and the handler's write stores its response in the same
 * transaction (store/idempotency.ts); a request that fails stores nothing and releases
 * the key, so its retry runs again (Stripe keeps 4xx too; here a failed request changed
 * nothing, so running it again is the honest answer and cannot double anything).
 */
import { createHash } from 'node:crypto';
import type { AnyResponse, Bound, RawRequest } from '../../../generated/openapi/bind';
import { IdempotencyLostError, type Store, type StoredResponse } from '../../store';
import { problem, PROBLEM_MEDIA_TYPE, type ProblemCode } from '../problem';
import type { AccountContext } from './operations';
import { bodyText } from '../respond';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
/** How long a first request may run before a retry may take its key over (it crashed before committing). */
export const IDEMPOTENCY_LOCK_MS = 60_000;
/** Seconds a client told 409 waits before retrying. */
const IN_FLIGHT_RETRY_AFTER_S = 1;
const KEY = /^[\x21-\x7E]{1,255}$/;

export interface IdempotencyOptions {
  store: Store;
  /** IDEMPOTENCY_TTL_S in milliseconds. */
  ttlMs: number;
  now?: () => number;
}

/** The key as sent: a structured-field string (`"..."`, the draft's form) or the bare value (Stripe's). */
export function parseIdempotencyKey(value: string): string | undefined {
  const bare = /^"(.*)"$/.exec(value)?.[1] ?? value;
  return KEY.test(bare) ? bare : undefined;
}

/**
 * What makes a retry "the same request": method, path, the body's media type, every
 * contract header but the key (Accept, Api-Version and If-Match select what is done and
 * answered) and the body as parsed (JSON whitespace does not matter, member order does).
 */
export function fingerprint(method: string, path: string, raw: RawRequest): string {
  const headers = Object.entries(raw.headers)
    .filter(([name]) => name !== IDEMPOTENCY_KEY_HEADER)
    .sort(([x], [y]) => (x < y ? -1 : 1));
  return createHash('sha256')
    .update(JSON.stringify([method, path, raw.contentType ?? null, headers, raw.body ?? null]))
    .digest('hex');
}

/** A response exactly as dispatch writes it (its body serialization and non-empty headers), for storing. */
export function storedResponse(res: AnyResponse): StoredResponse {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers ?? {})) if (v !== '') headers[k] = v;
  if (res.body === undefined) return { status: res.status, headers, body: '' };
  // As sendResponse writes it: a Content-Type among the headers (one refining the contract's) wins.
  if (res.contentType && headers['Content-Type'] === undefined) headers['Content-Type'] = res.contentType;
  return { status: res.status, headers, body: bodyText(res.body) };
}

function replay(stored: StoredResponse): AnyResponse {
  const { 'Content-Type': contentType, ...headers } = stored.headers;
  return { status: stored.status, headers: { ...headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' }, contentType, body: stored.body };
}

/** A refusal of this step, as the operation's problem response. */
function refused(code: ProblemCode, detail: string, headers?: Record<string, string>, extra?: Parameters<typeof problem>[2]): AnyResponse {
  return { status: problem(code).status, headers, contentType: PROBLEM_MEDIA_TYPE, body: problem(code, detail, extra) };
}

/**
 * `bound` with the Idempotency-Key step before its handler; `breaksContract` tells a request the
 * binding will refuse (operations.ts): asked of a request that sends a key only, so a request
 * without one is validated once, and one with a key twice (a few microseconds, for a create).
 */
export function idempotent(bound: Bound<AccountContext>, { store, ttlMs, now = Date.now }: IdempotencyOptions, breaksContract: (raw: RawRequest) => boolean): Bound<AccountContext> {
  return async function idempotentOperation(raw, ctx) {
    const sent = raw.headers[IDEMPOTENCY_KEY_HEADER];
    if (sent === undefined || breaksContract(raw)) return bound(raw, ctx);
    const key = typeof sent === 'string' ? parseIdempotencyKey(sent) : undefined;
    if (key === undefined) {
      return refused('VALIDATION_FAILED', 'Invalid header parameter', undefined, {
        errors: [{ pointer: `header:${IDEMPOTENCY_KEY_HEADER}`, message: 'must be 1 to 255 visible ASCII characters, bare or as a quoted string' }],
      });
    }
    const accountId = ctx.account.id;
    const claim = await store.claimIdempotencyKey(accountId, { key, fingerprint: fingerprint(ctx.method, ctx.path, raw), now: now(), lockMs: IDEMPOTENCY_LOCK_MS, ttlMs });
    switch (claim.kind) {
      case 'replay':
        return replay(claim.response);
      case 'mismatch':
        return refused('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request; use a new key for a new request');
      case 'in_flight':
        return refused('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed; retry later', { 'Retry-After': String(IN_FLIGHT_RETRY_AFTER_S) });
    }
    let res: AnyResponse;
    let storedByWrite = false;
    try {
      res = await bound(raw, { ...ctx, idempotency: { key, token: claim.token, storedByWrite: () => void (storedByWrite = true) } });
    } catch (err) {
      await store.releaseIdempotencyKey(accountId, key, claim.token).catch(() => undefined);
      if (err instanceof IdempotencyLostError) {
        return refused('IDEMPOTENCY_KEY_IN_USE', 'This request took longer than its Idempotency-Key lock and a retry took the key over; nothing was written', { 'Retry-After': String(IN_FLIGHT_RETRY_AFTER_S) });
      }
      throw err;
    }
    // A success was stored by the handler's write (the order writes) or is stored now, after it
    // (an operation whose write cannot take the completion: not atomic with its write, but its
    // retries are answered rather than told 409 until the lock expires); anything else stored
    // nothing: free the key. A store that fails here (it went away) does not turn the answer into
    // a 503: the key's lock expires by itself.
    if (res.status >= 300) await store.releaseIdempotencyKey(accountId, key, claim.token).catch(() => undefined);
    else if (!storedByWrite) await store.completeIdempotencyKey(accountId, key, claim.token, storedResponse(res)).catch(() => undefined);
    return res;
  };
}

/** Deletes expired keys every `everyMs` (unref'd: never keeps the process alive). */
export function startIdempotencySweeper(store: Store, { everyMs = 60_000, batch = 1000, onError }: { everyMs?: number; batch?: number; onError?: (err: unknown) => void } = {}): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    void (async () => {
      try {
        while ((await store.sweepIdempotencyKeys(Date.now(), batch)) === batch);
      } catch (err) {
        onError?.(err);
      } finally {
        running = false;
      }
    })();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
