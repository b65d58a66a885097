/**
 * The request pipeline: one node:http listener serving every operation of the generated
 * route table and the transport routes (/graphql, the SSE stream), each stage one
 * function, each rule one implementation:
 *
 *   route match (generated/openapi/routes.ts `matchPath`, written out at codegen time)
 *   -> begin (finalize.ts: request id, CORS fields)
 *   -> OPTIONS (preflight or Allow) and 405, by the contract's methods
 *   -> authenticate (auth.ts: the auth cache, else the token store)
 *   -> rate limit (rateLimit.ts)
 *   -> bind (rest/operations.ts: parameters and body, the generated validators as type guards)
 *   -> the typed handler (rest/handlers.ts, health.ts, docs.ts)
 *   -> conditional (conditional.ts `judgeRead`: If-Match's 412, a 304 for any GET whose ETag the client holds)
 *   -> one response writer (respond.ts), one problem writer for every refusal and error
 *   -> finalize (finalize.ts: log line, duration metric).
 *
 * A route owns its URL completely: what it does not serve it refuses (405 with Allow,
 * 404 for an id that names nothing); nothing is handed on to be answered a second time.
 * A path the contracts do not declare goes to the Koa application (`fallback`), where
 * users mount their own middleware and routes (koaShell.ts gives those the same request
 * id, CORS, problem, log and metric functions).
 *
 * Why not Koa for the contract's operations: through Koa's chain (context objects, a
 * promise per middleware, header plumbing) a cached read served 2.8 times fewer requests
 * per second than on a raw listener (BENCHMARKS.md, REST); every operation here,
 * tomorrow's included, runs the same short path.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { framingRefusal } from './framing';
import { matchPath, routes, type Resource } from '../../generated/openapi/routes';
import type { Account, Store } from '../store';
import { cachedAccount, resolveToken, bearerTokenOf } from './auth';
import type { AuthCache } from './authCache';
import { splitTarget, type Exchange, type Finalizer } from './finalize';
import { isRefusal, methodNotAllowed, refusal, refusalOf, type Refusal } from './problem';
import type { RateLimiter } from './rateLimit';
import { connectionClosing, NOT_RUN, send, sendProblem, sendResponse } from './respond';
import { sendsBody } from './body';
import { acceptableTo, bodyMediaTypes, breaksContract, readBody, readParameters, type AnyResponse, type Operation } from './rest/operations';
import type { RawRequest } from '../../generated/openapi/bind';
import { judgeRead, notModified, writePreconditions } from './conditional';
import type { RouteSpec } from '../../generated/openapi/routes';

/**
 * A route the OpenAPI contract does not describe but the service declares in its other
 * contracts (/graphql in schema.graphql, the SSE stream in asyncapi.yaml). It enters the
 * pipeline after routing: the pipeline begins and finalizes the exchange, answers
 * OPTIONS and 405, and writes its refusals and errors; `serve` answers the rest.
 */
export interface TransportRoute {
  /** The route template: the log and metric label. */
  readonly route: string;
  /** Whether a request path is this route's. */
  matches(path: string): boolean;
  /** The methods it serves. */
  readonly methods: ReadonlySet<string>;
  /** Serves an exchange whose method it serves; resolves to the status written. */
  serve(x: Exchange): Promise<number>;
  /** Writes the pipeline's own refusals (405) in the transport's shape; problem+json without it. */
  refuse?(x: Exchange, r: Refusal): Promise<number>;
}

export interface PipelineDeps {
  finalizer: Finalizer;
  /** Every operation of the route table, bound (rest/operations.ts `bindRoutes`). */
  operations: ReadonlyMap<RouteSpec, Operation>;
  store: Pick<Store, 'tokenBySelector'>;
  authCache: AuthCache;
  /** The REST rate limit, when RATE_LIMIT_RPS > 0. */
  limiter?: RateLimiter;
  bodyLimit: number;
  transports: readonly TransportRoute[];
  /** What the contracts do not declare: the Koa application. */
  fallback: RequestListener;
}

/**
 * The pipeline's authentication step for a transport route: the caller's account, or the
 * refusal (401; 503 when the store cannot check the token), so each transport answers it
 * in its own shape.
 */
export function authenticator(store: Pick<Store, 'tokenBySelector'>, cache: AuthCache) {
  return async function authenticate(req: IncomingMessage): Promise<Account | Refusal> {
    try {
      return cachedAccount(req.headers.authorization, cache) ?? (await resolveToken(bearerTokenOf(req.headers.authorization, undefined), store, cache));
    } catch (err) {
      const refused = refusalOf(err);
      if (refused) return refused;
      throw err;
    }
  };
}

/** `res` without the handler's Deprecation, Sunset and deprecation Link (the operation's own are on the exchange). */
function withoutDeprecation(res: AnyResponse): AnyResponse {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers ?? {})) {
    if (name === 'Deprecation' || name === 'Sunset' || (name === 'Link' && value.includes('rel="deprecation"'))) continue;
    headers[name] = value;
  }
  return { ...res, headers };
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
/**
 * A path with its percent-encoded unreserved characters decoded and every other escape's
 * hex in capitals (RFC 3986 6.2.2.1-2: `/%6Frders` and `/orders` are the same URI), so a
 * route matches, logs, and fingerprints an idempotent request, by one spelling.
 */
function normalizedPath(path: string): string {
  return path.replace(/%([0-9A-Fa-f]{2})/g, (escape: string, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(c) ? c : escape.toUpperCase();
  });
}

/** A request target in absolute form (`GET http://host/orders HTTP/1.1`, as sent to a proxy). */
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/**
 * The origin form of an absolute-form target (RFC 9112 3.2.2: a server MUST accept it):
 * its path and query, `/` when it has no path. Written back to `req.url` once, so every
 * route, the Koa application and the log line see the same target.
 */
export function originForm(url: string): string {
  const rest = url.replace(ABSOLUTE_FORM, '');
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** Every method some path of the service serves, from the route table (/graphql's GET and POST are among them): the answer to `OPTIONS *`. */
const SERVER_METHODS = ((served: Set<string>) => {
  if (served.has('GET')) served.add('HEAD');
  return ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter((m) => served.has(m)).join(', ');
})(new Set([...routes.map((r) => r.method), 'OPTIONS']));

export function createPipeline(deps: PipelineDeps): RequestListener {
  const fin = deps.finalizer;
  const { limiter, bodyLimit } = deps;

  /** Whether the request is a CORS preflight this service allows: its fields are then set (the methods allowed: `allow`, else every method). */
  function preflight(x: Exchange, allow?: string): boolean {
    const fields = fin.cors?.preflight(x.req.headers.origin, x.req.headers['access-control-request-method'], allow);
    if (!fields) return false;
    fin.resetFields(x, 'preflight', fields);
    return true;
  }

  /** OPTIONS: a CORS preflight's 204, else a 204 with `Allow` (RFC 9110 9.3.7); `acceptPatch` on a path that takes PATCH (RFC 5789 3.1). */
  function options(x: Exchange, allow: string, acceptPatch?: string): number {
    preflight(x, allow);
    x.fields.push('Allow', allow);
    if (acceptPatch !== undefined) x.fields.push('Accept-Patch', acceptPatch);
    return send(fin, x, 204, undefined, undefined);
  }

  /** A request the route cannot answer normally: a refusal is the client's, anything else a 500 (logged). */
  function fail(x: Exchange, err: unknown): number {
    const known = refusalOf(err);
    if (!known) fin.error(x, err);
    if (x.res.headersSent) {
      x.res.destroy();
      return 500;
    }
    fin.resetFields(x, 'simple');
    // What every answer of the operation carries.
    if (x.always) x.fields.push(...x.always);
    return sendProblem(fin, x, known ?? refusal('INTERNAL'));
  }

  function finish(x: Exchange, serving: Promise<number>): void {
    serving
      .catch((err: unknown) => fail(x, err))
      .then((status) => fin.end(x, status))
      // Nothing may reject unhandled (Node would exit): a failure of the log line itself is reported.
      .catch((err: unknown) => fin.error(x, err));
  }

  /** One path for every operation: authenticate and rate-limit (an operation that requires a token), bind, the checks before it runs, run, represent. */
  async function operation(x: Exchange, op: Operation, params: Record<string, string>): Promise<number> {
    const req = x.req;
    const method = req.method ?? 'GET';
    let run: (raw: RawRequest) => Promise<AnyResponse>;
    if (op.auth) {
      // The auth cache first (synchronous): most requests of a client come after its first.
      const account = cachedAccount(req.headers.authorization, deps.authCache) ?? (await resolveToken(bearerTokenOf(req.headers.authorization, undefined), deps.store, deps.authCache));
      if (isRefusal(account)) return sendProblem(fin, x, account);
      run = (raw) => op.run(raw, { method, path: x.path, account });
      if (limiter) {
        // Right after authentication, before any parsing: a refused request costs nothing more.
        const taken = limiter.spendNow ? limiter.spendNow(account.id) : await limiter.spend(account.id);
        if (!taken.admitted) return sendProblem(fin, x, limiter.refusal(taken));
        limiter.pushFields(x.fields, taken);
      }
    } else {
      run = (raw) => op.run(raw, { method, path: x.path });
    }
    // Synchronous for what sends no body (a read); a body, declared or not, is read before the operation runs.
    const raw = op.spec.body || sendsBody(req) ? await bind(req, op, params, x.search) : readParameters(req, op, params, x.search);
    if (isRefusal(raw)) return sendProblem(fin, x, raw);
    const stop = beforeRun(x, op);
    if (stop && (stop === NOT_RUN || !breaksContract(op.spec, raw))) return sendProblem(fin, x, stop);
    const res = await run(raw);
    // The handler's type admits only the statuses its contract declares; a cast around it
    // (or a JavaScript handler) could still answer another, which no client is ready for:
    // that is a bug of the service, answered 500 and logged with the operation, never sent.
    if (op.spec.responses[res.status] === undefined) throw new Error(`${op.spec.operationId} answered ${res.status}, a status its contract does not declare (${Object.keys(op.spec.responses).join(', ')})`);
    // An operation deprecated on its own says so with its own dates; a deprecated version's
    // fields from the handler would make a second, conflicting Deprecation and Sunset.
    return represent(x, op.spec.deprecation && res.headers?.Deprecation !== undefined ? withoutDeprecation(res) : res);
  }

  /**
   * The last steps before an operation runs, once its request is bound: Accept for an operation
   * that offers one media type (406), the preconditions of a
   * write that does not judge its own, and the connection's state: a request pipelined behind
   * an answer that closes the connection learns it at the latest here, and is not run.
   */
  function beforeRun(x: Exchange, op: Operation): Refusal | undefined {
    return acceptableTo(x.req, op) ?? (op.ownPreconditions ? undefined : writePreconditions(x.req)) ?? (connectionClosing(x) ? NOT_RUN : undefined);
  }

  /** The bind step: parameters, then the body where the operation declares one. */
  async function bind(req: IncomingMessage, op: Operation, params: Record<string, string>, search: string) {
    const raw = readParameters(req, op, params, search);
    return isRefusal(raw) ? raw : readBody(req, op, raw, bodyLimit);
  }

  /** The conditional step of a read (conditional.ts `judgeRead`: 412 or 304), then the response writer. */
  function represent(x: Exchange, res: AnyResponse): number {
    const verdict = judgeRead(x.req.method ?? 'GET', x.req.headers, res.status, res.headers?.ETag);
    if (verdict === 'precondition_failed') return sendProblem(fin, x, refusal('PRECONDITION_FAILED', 'If-Match names no entity tag of the current representation'));
    return sendResponse(fin, x, verdict === 'not_modified' ? notModified(res) : res);
  }

  function resource(req: IncomingMessage, res: ServerResponse, r: Resource, params: Record<string, string>, path: string, search: string): void {
    const x = fin.begin(req, res, path, search);
    x.route = r.path;
    const method = req.method ?? 'GET';
    // HEAD of a resource whose contract declares GET alone is GET without the body (RFC 9110 9.3.2).
    const spec = r.methods[method] ?? (method === 'HEAD' ? r.methods.GET : undefined);
    const op = spec && deps.operations.get(spec);
    if (op) {
      // An operation deprecated on its own says so on every answer (the contract's dates, written out by codegen).
      if (op.spec.deprecation) {
        x.always = op.spec.deprecation;
        x.fields.push(...op.spec.deprecation);
      }
      return finish(x, operation(x, op, params));
    }
    if (method === 'OPTIONS') return void fin.end(x, options(x, r.allow, r.methods.PATCH && bodyMediaTypes(r.methods.PATCH)));
    fin.end(x, sendProblem(fin, x, methodNotAllowed(method, r.allow)));
  }

  function transport(req: IncomingMessage, res: ServerResponse, t: TransportRoute, path: string, search: string): void {
    const x = fin.begin(req, res, path, search);
    x.route = t.route;
    const method = req.method ?? 'GET';
    // HEAD wherever GET is (RFC 9110 9.3.2): the route answers it as its GET, and the one response writer sends the head alone.
    if (t.methods.has(method) || (method === 'HEAD' && t.methods.has('GET'))) return finish(x, t.serve(x));
    const allow = [...t.methods, ...(t.methods.has('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
    if (method === 'OPTIONS') return void fin.end(x, options(x, allow));
    const refused = methodNotAllowed(method, allow);
    if (t.refuse) return finish(x, t.refuse(x, refused));
    fin.end(x, sendProblem(fin, x, refused));
  }

  /**
   * The asterisk-form target (RFC 9112 3.2.4): `OPTIONS *` asks about the server itself, and
   * is answered 204 with every method some path serves; with any other method it names nothing: 400.
   */
  function asterisk(req: IncomingMessage, res: ServerResponse): void {
    const x = fin.begin(req, res, '*', '');
    if (req.method === 'OPTIONS') {
      x.fields.push('Allow', SERVER_METHODS);
      return void fin.end(x, send(fin, x, 204, undefined, undefined));
    }
    fin.end(x, sendProblem(fin, x, refusal('BAD_REQUEST', 'The target * names the server, for OPTIONS only (RFC 9112 3.2.4)')));
  }

  function route(req: IncomingMessage, res: ServerResponse): void {
    if (connectionClosing({ req })) return; // pipelined behind a refusal that closes the connection (respond.ts)
    // Judged on the request as sent (its target's length before any rewriting), before any work on its path.
    const framing = framingRefusal(req);
    if (framing) {
      const x = fin.begin(req, res, ...splitTarget(req.url ?? '/'));
      return void fin.end(x, sendProblem(fin, x, framing));
    }
    let url = req.url ?? '/';
    if (url.charCodeAt(0) !== 0x2f && ABSOLUTE_FORM.test(url)) req.url = url = originForm(url);
    const q = url.indexOf('?');
    const raw = q < 0 ? url : url.slice(0, q);
    const path = raw.includes('%') ? normalizedPath(raw) : raw;
    const search = q < 0 ? '' : url.slice(q + 1);
    if (path === '*') return asterisk(req, res);
    const matched = matchPath(path);
    if (matched) return resource(req, res, matched.resource, matched.params, path, search);
    for (const t of deps.transports) if (t.matches(path)) return transport(req, res, t, path, search);
    // A contract URL in another case or with a trailing slash is an unknown resource (404), not
    // one for the Koa application: @koa/router matches case-insensitively and with a trailing
    // slash by default, and a user's route there would serve a contract URL around its rules.
    const loose = path.toLowerCase().replace(/\/+$/, '') || '/';
    if (loose !== path && (matchPath(loose) || deps.transports.some((t) => t.matches(loose)))) {
      const x = fin.begin(req, res, path, search);
      // Its preflight passes, as every unknown path's does (koaShell.ts): the browser then shows the page the 404 itself, not a CORS failure.
      if (req.method === 'OPTIONS' && preflight(x)) return void fin.end(x, send(fin, x, 204, undefined, undefined));
      return void fin.end(x, sendProblem(fin, x, refusal('NOT_FOUND', `No route for ${path}: paths match exactly`)));
    }
    deps.fallback(req, res);
  }

  return function pipeline(req, res) {
    try {
      route(req, res);
    } catch (err) {
      // The catch-all: a synchronous throw would otherwise reach node:http's 'request' emitter and end the process.
      const x = fin.begin(req, res, ...splitTarget(req.url ?? '/'));
      fin.end(x, fail(x, err));
    }
  };
}
