import type { Account, Store } from '../store';
import { hashVerifier, parseToken, verifierMatches } from '../store';
import { refusal, type Refusal } from './problem';
import type { AuthCache } from './authCache';

/**
 * The bearer token of a request: the Authorization header, else `access_token` (where a
 * browser cannot send headers: EventSource, WebSocket) when it is one string (a repeated
 * one is no token), as node's querystring parses it.
 */
export function bearerTokenOf(authorization: string | undefined, accessToken: unknown): string | undefined {
  const m = /^Bearer +(\S+)$/i.exec(authorization ?? '');
  if (m) return m[1];
  if (typeof accessToken === 'string') return accessToken;
  return undefined;
}

/**
 * The bearer token of a stream request (SSE, a WebSocket handshake), where it may come in the
 * header or in `access_token`: bearerTokenOf, or 400 `invalid_request` for a request that
 * carries both (RFC 6750 3.1: "uses more than one method for including an access token"), rather
 * than one of the two silently winning, or `access_token` twice (RFC 6750 3.1: "repeats the same
 * parameter"), rather than a 401 that would call a good token missing.
 */
export function streamToken(authorization: string | undefined, accessToken: unknown): string | undefined | Refusal {
  // Only a Bearer credential is a second token: `Authorization: Basic` (a browser sends it on its own to
  // a site behind HTTP Basic auth) carries none, as it carries none on REST.
  if (authorization !== undefined && accessToken !== undefined && BEARER_SCHEME.test(authorization)) {
    return refusal('BAD_REQUEST', 'Send the bearer token once: in Authorization or in access_token, not both (RFC 6750 3.1)', { 'WWW-Authenticate': `${BEARER_CHALLENGE}, error="invalid_request"` });
  }
  if (Array.isArray(accessToken)) return refusal('BAD_REQUEST', 'Send access_token once (RFC 6750 3.1)', { 'WWW-Authenticate': `${BEARER_CHALLENGE}, error="invalid_request"` });
  return bearerTokenOf(authorization, accessToken);
}

/**
 * The account of a bearer `Authorization` header when the auth cache already knows it;
 * undefined for anything else (no or malformed token, a cache miss), which the caller
 * leaves to `resolveToken`. Synchronous: most requests of a client come after its first.
 */
export function cachedAccount(authorization: string | undefined, cache: AuthCache): Account | undefined {
  const token = bearerTokenOf(authorization, undefined);
  return token === undefined ? undefined : cache.get(token);
}

/** An Authorization field of the Bearer scheme (RFC 9110 11.1: the scheme is case-insensitive), well-formed or not. */
const BEARER_SCHEME = /^\s*bearer(?:\s|$)/i;

/** The challenge of every 401 (RFC 6750 3). */
export const BEARER_CHALLENGE = 'Bearer realm="orderline"';

/** The 401 of a request that carries no bearer token. */
export function missingToken(): Refusal {
  return refusal('UNAUTHORIZED', 'A bearer token is required', { 'WWW-Authenticate': BEARER_CHALLENGE });
}

/**
 * Resolves a bearer token to an account, or the 401 refusal with its
 * `WWW-Authenticate: Bearer` challenge (RFC 6750 3). Split tokens (store/tokens.ts): the
 * selector finds the row, the verifier's hash is compared in constant time.
 */
export async function resolveToken(token: string | undefined, store: Pick<Store, 'tokenBySelector'>, cache: AuthCache): Promise<Account | Refusal> {
  if (!token) return missingToken();
  const cached = cache.get(token);
  if (cached) return cached;
  const invalid = () => refusal('UNAUTHORIZED', 'The bearer token is invalid', { 'WWW-Authenticate': `${BEARER_CHALLENGE}, error="invalid_token"` });
  const parts = parseToken(token); // our exact format, or it cannot be valid
  if (!parts) return invalid();
  const found = await store.tokenBySelector(parts.selector);
  if (!found || !verifierMatches(found.verifierHash, hashVerifier(parts.verifier))) return invalid();
  cache.set(token, found.account);
  return found.account;
}
