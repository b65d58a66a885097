/**
 * CORS (Fetch standard, "CORS protocol") for browser apps served from another origin,
 * written here (see corsPolicy). Off unless `CORS_ORIGINS` names origins: a service that never said
 * who may call it from a browser answers no one.
 *
 * - Only exact origins (`https://app.example.com`) or `*`. Credentials are never
 *   allowed: orderline authenticates with bearer tokens, not cookies, so no ambient
 *   credential rides along and `*` is a policy choice, not a hole.
 * - Preflight allows the headers our clients send: bearer auth, the conditional
 *   headers (If-Match on every write, If-None-Match on cached reads), Content-Type
 *   (merge-patch and JSON are not CORS-safelisted), Api-Version, Last-Event-ID (the
 *   SDK's SSE resume over fetch) and Idempotency-Key (retried creates); and the headers
 *   common browser clients add on their own: W3C Trace Context (`traceparent`,
 *   `tracestate`: OpenTelemetry's fetch instrumentation) and Apollo Client's client
 *   awareness (`apollographql-client-name`, `-version`). A browser refuses the whole request
 *   when its preflight does not allow one header it sends; others (a tracing vendor's) are
 *   added with CORS_ALLOW_HEADERS.
 * - Exposes every response header the contract declares (generated/openapi/routes.ts's
 *   `declaredResponseHeaders`, after the service's own list), and allows every header parameter
 *   it declares (`declaredRequestHeaders`): a header an operation adds needs no edit here. The own lists:
 *   ETag (for If-Match), Location (after a create), Retry-After (429/503), Sunset and
 *   Deprecation (v1), Link, Api-Version, X-Request-Id, the rate limit's RateLimit and
 *   RateLimit-Policy (a client paces itself on them), Idempotent-Replayed (a retried
 *   create), and the fields that say how to repair a refused request: Allow (405),
 *   Accept-Patch and Accept-Encoding (415), WWW-Authenticate (401); and Vary.
 * - Streams: SSE responses carry the same headers (this runs before them). WebSocket is
 *   not subject to CORS; its upgrade authenticates by `access_token`, never a cookie.
 */
import { declaredRequestHeaders, declaredResponseHeaders } from '../../generated/openapi/routes';
import { TOKEN } from './mediaType';

/** `own`, then each of `declared` that it does not name (field names are case-insensitive). */
const withDeclared = (own: readonly string[], declared: readonly string[]): readonly string[] => {
  const named = new Set(own.map((h) => h.toLowerCase()));
  return [...own, ...declared.filter((h) => !named.has(h.toLowerCase()))];
};

/** Request headers a preflight allows (besides the CORS-safelisted ones): the service's own, then the contract's other header parameters. */
export const CORS_ALLOW_HEADERS = withDeclared(
  [
    'Authorization',
    // Safelisted only up to 128 bytes and without `"`: `version="1"` of a vendor media type is not.
    'Accept',
    'If-Match',
    'If-None-Match',
    'Content-Type',
    'Api-Version',
    'Last-Event-ID',
    'Idempotency-Key',
    'X-Request-Id',
    'traceparent',
    'tracestate',
    'apollographql-client-name',
    'apollographql-client-version',
  ],
  declaredRequestHeaders,
);
/** Response headers a cross-origin script may read (besides the CORS-safelisted ones): the service's own, then the contract's others. */
export const CORS_EXPOSE_HEADERS = withDeclared(
  [
    'ETag',
    'Location',
    'Retry-After',
    'Sunset',
    'Deprecation',
    'Link',
    'Api-Version',
    'X-Request-Id',
    'RateLimit',
    'RateLimit-Policy',
    'Idempotent-Replayed',
    'Allow',
    'Accept-Patch',
    'Accept-Encoding',
    'WWW-Authenticate',
    'Vary',
  ],
  declaredResponseHeaders,
);
export const CORS_ALLOW_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
/** How long a browser may reuse a preflight answer. */
export const CORS_MAX_AGE_S = 600;

/**
 * The policy for the configured origins, as two functions of the request. Written here
 * rather than with @koa/cors: the pipeline serves without Koa, and one implementation
 * answers both it and the Koa shell.
 */
export interface CorsPolicy {
  /** An actual request: appends `Access-Control-Allow-Origin` and `-Expose-Headers` when `origin` is allowed. */
  simple(origin: string | undefined, fields: string[]): void;
  /**
   * A preflight (OPTIONS with Origin and Access-Control-Request-Method): the fields of its
   * 204 when the origin is allowed; undefined for any other request, which is then
   * answered as a plain OPTIONS (no CORS field: the browser refuses). `methods`: the path's
   * methods (its `Allow`, OPTIONS included), which the preflight then allows, rather than every method the
   * service has, so a browser never sends a request the path refuses 405 (paths the
   * contracts do not declare, served by Koa, have no such list).
   */
  preflight(origin: string | undefined, requestMethod: string | undefined, methods?: string): string[] | undefined;
}

/** The policy for `origins` (already validated by config), or none when the list is empty; `extraHeaders`: CORS_ALLOW_HEADERS, allowed besides ours. */
export function corsPolicy(origins: readonly string[], extraHeaders: readonly string[] = []): CorsPolicy | undefined {
  if (origins.length === 0) return undefined;
  const any = origins.includes('*');
  const allowed = new Set(origins);
  const exposeHeaders = CORS_EXPOSE_HEADERS.join(',');
  const allowMethods = CORS_ALLOW_METHODS.join(',');
  const allowHeaders = [...CORS_ALLOW_HEADERS, ...extraHeaders].join(',');
  const allowOrigin = (origin: string | undefined) => (any ? '*' : origin !== undefined && allowed.has(origin) ? origin : undefined);
  return {
    simple(origin, fields) {
      if (origin === undefined) return;
      const allow = allowOrigin(origin);
      if (allow !== undefined) fields.push('Access-Control-Allow-Origin', allow, 'Access-Control-Expose-Headers', exposeHeaders);
    },
    preflight(origin, requestMethod, methods) {
      if (origin === undefined || requestMethod === undefined) return undefined;
      const allow = allowOrigin(origin);
      if (allow === undefined) return undefined;
      // OPTIONS too: a page may ask a path what it allows (`fetch(url, { method: 'OPTIONS' })` is preflighted like any method not safelisted).
      const named = methods?.split(/\s*,\s*/).filter((m) => m !== '');
      const allowed = named === undefined ? allowMethods : (named.includes('OPTIONS') ? named : [...named, 'OPTIONS']).join(',');
      return ['Access-Control-Allow-Origin', allow, 'Access-Control-Max-Age', String(CORS_MAX_AGE_S), 'Access-Control-Allow-Methods', allowed, 'Access-Control-Allow-Headers', allowHeaders];
    },
  };
}

/** A field name (RFC 9110 5.1: a token). */
const FIELD_NAME = TOKEN;

/** CORS_ALLOW_HEADERS: comma-separated request header names a preflight allows besides ours; an entry that is no field name is an error. */
export function parseCorsAllowHeaders(raw: string | undefined): { ok: true; headers: string[] } | { ok: false; error: string } {
  const entries = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  // `*` is a token, but in Access-Control-Allow-Headers it would allow every header: name them.
  const bad = entries.find((e) => !FIELD_NAME.test(e) || e.includes('*'));
  if (bad !== undefined) return { ok: false, error: `CORS_ALLOW_HEADERS: "${bad}" is not a header name (name each header; * is not taken)` };
  const seen = new Set(CORS_ALLOW_HEADERS.map((h) => h.toLowerCase()));
  const headers: string[] = [];
  for (const e of entries) {
    if (seen.has(e.toLowerCase())) continue;
    seen.add(e.toLowerCase());
    headers.push(e);
  }
  return { ok: true, headers };
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
