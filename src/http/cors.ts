/**
 * CORS (Fetch standard, "CORS protocol") for browser apps served from another origin,
 * with @koa/cors. Off unless `CORS_ORIGINS` names origins: a service that never said
 * who may call it from a browser answers no one.
 *
 * - Only exact origins (`https://app.example.com`) or `*`. Credentials are never
 *   allowed: orderline authenticates with bearer tokens, not cookies, so no ambient
 *   credential rides along and `*` is a policy choice, not a hole.
 * - Preflight allows the headers our clients send: bearer auth, the conditional
 *   headers (If-Match on every write, If-None-Match on cached reads), Content-Type
 *   (merge-patch and JSON are not CORS-safelisted), Api-Version, Last-Event-ID (the
 *   SDK's SSE resume over fetch) and Idempotency-Key (retried creates).
 * - Exposes what a client must read to use the API: ETag (for If-Match), Location
 *   (after a create), Retry-After (429/503), Sunset and Deprecation (v1), Link, Api-Version.
 * - Streams: SSE responses carry the same headers (this runs before them). WebSocket is
 *   not subject to CORS; its upgrade authenticates by `access_token`, never a cookie.
 */
import cors from '@koa/cors';
import type Koa from 'koa';

/** Request headers a preflight allows (besides the CORS-safelisted ones). */
export const CORS_ALLOW_HEADERS = ['Authorization', 'If-Match', 'If-None-Match', 'Content-Type', 'Api-Version', 'Last-Event-ID', 'Idempotency-Key'] as const;
/** Response headers a cross-origin script may read (besides the CORS-safelisted ones). */
export const CORS_EXPOSE_HEADERS = ['ETag', 'Location', 'Retry-After', 'Sunset', 'Deprecation', 'Link', 'Api-Version'] as const;
export const CORS_ALLOW_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** How long a browser may reuse a preflight answer. */
export const CORS_MAX_AGE_S = 600;

/** The middleware for `origins` (already validated by config), or none when the list is empty. */
export function corsMiddleware(origins: readonly string[]): Koa.Middleware | undefined {
  if (origins.length === 0) return undefined;
  const any = origins.includes('*');
  const allowed = new Set(origins);
  const middleware = cors({
    // '' means "not allowed": @koa/cors then adds no CORS header and the browser refuses.
    origin: (ctx) => (any ? '*' : allowed.has(ctx.get('Origin')) ? ctx.get('Origin') : ''),
    allowMethods: [...CORS_ALLOW_METHODS],
    allowHeaders: [...CORS_ALLOW_HEADERS],
    exposeHeaders: [...CORS_EXPOSE_HEADERS],
    maxAge: CORS_MAX_AGE_S,
    credentials: false,
  });
  // @koa/cors adds `Vary: Origin` before the handlers run; handlers that set Vary whole
  // (negotiation: `Accept, Api-Version`) replace it, so it is appended again after them.
  return async function corsHeaders(ctx, next) {
    await middleware(ctx, next);
    ctx.vary('Origin');
  };
}

/**
 * The CORS headers of an actual (non-preflight) request, for routes served on node:http
 * without Koa (edge.ts): the same answer corsMiddleware gives such a request, as a
 * function of the Origin header. `undefined` when CORS is off; `allowOrigin` undefined
 * when this origin is not allowed (no CORS header, the browser refuses). Vary: Origin
 * is the route's to append (it owns Vary).
 */
export function simpleCors(origins: readonly string[]): ((origin: string | undefined) => { allowOrigin: string | undefined; exposeHeaders: string }) | undefined {
  if (origins.length === 0) return undefined;
  const any = origins.includes('*');
  const allowed = new Set(origins);
  const exposeHeaders = CORS_EXPOSE_HEADERS.join(',');
  return (origin) => ({ allowOrigin: any ? '*' : origin !== undefined && allowed.has(origin) ? origin : undefined, exposeHeaders });
}

/** CORS_ORIGINS: comma-separated exact origins, or `*`; an entry that is not an origin is an error. */
export function parseCorsOrigins(raw: string | undefined): { ok: true; origins: string[] } | { ok: false; error: string } {
  const entries = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const e of entries) {
    if (e === '*') continue;
    let origin: string | undefined;
    try {
      origin = new URL(e).origin;
    } catch {
      origin = undefined;
    }
    if (origin !== e) return { ok: false, error: `CORS_ORIGINS: "${e}" is not an origin (scheme://host[:port], no path or trailing slash) or *` };
  }
  return { ok: true, origins: entries };
}
