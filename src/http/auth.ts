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
 * The auth cache's key of a token (its selector and the hash of its verifier: a known
 * selector with a wrong verifier never hits), or null when the token is not in our format.
 */
function cacheKeyOf(token: string): { key: string; selector: string; sent: string } | null {
  const parts = parseToken(token); // our exact format, or it cannot be valid
  if (!parts) return null;
  const sent = hashVerifier(parts.verifier);
  return { key: `${parts.selector}.${sent}`, selector: parts.selector, sent };
}

/**
 * The account of a bearer `Authorization` header when the auth cache already knows it;
 * undefined for anything else (no or malformed token, a cache miss), which the caller
 * leaves to `resolveToken`. Synchronous: most requests of a client come after its first.
 */
export function cachedAccount(authorization: string | undefined, cache: AuthCache): Account | undefined {
  const token = bearerTokenOf(authorization, undefined);
  const key = token === undefined ? null : cacheKeyOf(token);
  return key === null ? undefined : cache.get(key.key);
}

const CHALLENGE = 'Bearer realm="orderline"';

/**
 * Resolves a bearer token to an account, or the 401 refusal with its
 * `WWW-Authenticate: Bearer` challenge (RFC 6750 3). Split tokens (store/tokens.ts): the
 * selector finds the row, the verifier's hash is compared in constant time.
 */
export async function resolveToken(token: string | undefined, store: Pick<Store, 'tokenBySelector'>, cache: AuthCache): Promise<Account | Refusal> {
  if (!token) return refusal('UNAUTHORIZED', 'A bearer token is required', { 'WWW-Authenticate': CHALLENGE });
  const parsed = cacheKeyOf(token);
  const invalid = () => refusal('UNAUTHORIZED', 'The bearer token is invalid', { 'WWW-Authenticate': `${CHALLENGE}, error="invalid_token"` });
  if (parsed === null) return invalid();
  const { key, selector, sent } = parsed;
  const cached = cache.get(key);
  if (cached) return cached;
  const found = await store.tokenBySelector(selector);
  if (!found || !verifierMatches(found.verifierHash, sent)) return invalid();
  cache.set(key, found.account);
  return found.account;
}
