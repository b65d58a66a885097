import type { Context, Middleware } from 'koa';
import type { Account, Store } from '../store';
import { hashVerifier, parseToken, verifierMatches } from '../store';
import { httpProblem } from './problem';
import type { AuthCache } from './authCache';

declare module 'koa' {
  interface DefaultState {
    account?: Account;
  }
}

/** The bearer token of a request: the Authorization header, or `access_token` where a browser cannot send headers. */
export function bearerToken(ctx: Context, allowQuery: boolean): string | undefined {
  return bearerTokenOf(ctx.get('authorization'), allowQuery ? ctx.query.access_token : undefined);
}

/**
 * The same rule without Koa (routes served on node:http, edge.ts): the Authorization
 * header, else `access_token` when it is one string (a repeated one is no token), as
 * node's querystring parses it (Koa's `ctx.query`).
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
 * leaves to `authenticate` (the edge's order read, http/edge.ts, declines it).
 */
export function cachedAccount(authorization: string | undefined, cache: AuthCache): Account | undefined {
  const token = bearerTokenOf(authorization, undefined);
  const key = token === undefined ? null : cacheKeyOf(token);
  return key === null ? undefined : cache.get(key.key);
}

/**
 * Resolves `Authorization: Bearer <token>` to an account, or answers 401 with a
 * `WWW-Authenticate: Bearer` challenge (RFC 6750 3). Split tokens (store/tokens.ts):
 * the selector finds the row, the verifier's hash is compared in constant time.
 */
export function authenticateRequest(ctx: Context, store: Store, cache: AuthCache, allowQuery = false): Promise<Account> {
  return accountForToken(bearerToken(ctx, allowQuery), store, cache);
}

/** The account of a bearer token, or the 401 problem; for callers outside Koa (the WebSocket upgrade). */
export async function accountForToken(token: string | undefined, store: Store, cache: AuthCache): Promise<Account> {
  if (!token) throw httpProblem('UNAUTHORIZED', 'A bearer token is required', { 'WWW-Authenticate': 'Bearer realm="orderline"' });
  const invalid = () =>
    httpProblem('UNAUTHORIZED', 'The bearer token is invalid', { 'WWW-Authenticate': 'Bearer realm="orderline", error="invalid_token"' });
  const parsed = cacheKeyOf(token);
  if (parsed === null) throw invalid();
  const { key, selector, sent } = parsed;
  const cached = cache.get(key);
  if (cached) return cached;
  const found = await store.tokenBySelector(selector);
  if (!found || !verifierMatches(found.verifierHash, sent)) throw invalid();
  cache.set(key, found.account);
  return found.account;
}

export function authenticate(store: Store, cache: AuthCache): Middleware {
  return async function authenticate(ctx, next) {
    ctx.state.account = await authenticateRequest(ctx, store, cache);
    await next();
  };
}
