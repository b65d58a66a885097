import type { Context, Middleware } from 'koa';
import type { Account, Store } from '../store';
import { hashToken } from '../store';
import { httpProblem } from './problem';
import type { AuthCache } from './authCache';

declare module 'koa' {
  interface DefaultState {
    account?: Account;
  }
}

/** RFC 6750 token68 characters; anything else cannot be one of our tokens. */
const TOKEN = /^[A-Za-z0-9._~+/-]+=*$/;

/** The bearer token of a request: the Authorization header, or `access_token` where a browser cannot send headers. */
export function bearerToken(ctx: Context, allowQuery: boolean): string | undefined {
  const h = ctx.get('authorization');
  const m = /^Bearer +(\S+)$/i.exec(h);
  if (m) return m[1];
  if (allowQuery && typeof ctx.query.access_token === 'string') return ctx.query.access_token;
  return undefined;
}

/**
 * Resolves `Authorization: Bearer <token>` to an account, or answers 401 with a
 * `WWW-Authenticate: Bearer` challenge (RFC 6750 3). Tokens are stored hashed (SHA-256
 * of 256 random bits) and looked up by that hash: the index comparison's timing can
 * reveal at most bits of a hash the caller cannot invert, never bits of a token.
 */
export async function authenticateRequest(ctx: Context, store: Store, cache: AuthCache, allowQuery = false): Promise<Account> {
  const token = bearerToken(ctx, allowQuery);
  if (!token) throw httpProblem('UNAUTHORIZED', 'A bearer token is required', { 'WWW-Authenticate': 'Bearer realm="orderline"' });
  const invalid = () =>
    httpProblem('UNAUTHORIZED', 'The bearer token is invalid', { 'WWW-Authenticate': 'Bearer realm="orderline", error="invalid_token"' });
  if (token.length > 200 || !TOKEN.test(token)) throw invalid();
  const hash = hashToken(token);
  const cached = cache.get(hash);
  if (cached) return cached;
  const account = await store.accountByTokenHash(hash);
  if (!account) throw invalid();
  cache.set(hash, account);
  return account;
}

export function authenticate(store: Store, cache: AuthCache): Middleware {
  return async function authenticate(ctx, next) {
    ctx.state.account = await authenticateRequest(ctx, store, cache);
    await next();
  };
}
