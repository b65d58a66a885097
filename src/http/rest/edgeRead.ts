/**
 * The order read (GET and HEAD of `/orders/{id}` and every `/v<n>/orders/{id}` the
 * contract defines) served on raw node:http before Koa (http/edge.ts): the hottest
 * request, answered from the representation cache without a Koa context, a promise per
 * middleware or header plumbing.
 *
 * It answers only what it can answer exactly as the Koa path does, with the same rules,
 * not copies: the route table, integer rule and Ajv validators the binding uses
 * (generated/openapi/routes.ts, dispatch.ts), the auth cache (auth.ts), the decision
 * and representation cache of the Koa handler (`orderReads`, handlers.ts: negotiation,
 * conditional rules, ETags, deprecation headers), the rate limit's Koa-free core (rateLimit.ts)
 * and the request id, CORS, log line and metric of `EdgeEssentials`. It declines
 * (`next()`, before writing anything) everything else: a query string, an id or header
 * the binding would refuse, no token or one the auth cache does not know yet, a 404 or
 * 406 (Koa answers them as problem+json), a refused rate limit, any error. What it
 * declines is decided before the rate limit's token is spent, so Koa spends it once.
 * test/integration/edgeRead.test.ts proves the two paths give the same answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ValidateFunction } from 'ajv';
import { routes } from '../../../generated/openapi/routes';
import type { Account } from '../../store';
import { isVersion, type ApiVersion } from '../../orders';
import { cachedAccount } from '../auth';
import type { AuthCache } from '../authCache';
import type { TakeResult } from '../../limits';
import type { RateLimiter } from '../rateLimit';
import type { EdgeEssentials, EdgeRoute } from '../edge';
import { CANONICAL_INTEGER } from './dispatch';
import { CACHE_CONTROL, VARY, type OrderReads, type ReadAnswer } from './handlers';

export interface OrderReadRouteDeps {
  reads: OrderReads;
  authCache: AuthCache;
  essentials: EdgeEssentials;
  /** The rate limit's Koa-free core (rateLimiter) when RATE_LIMIT_RPS > 0. */
  rateLimit?: RateLimiter;
}

/** One URL form of the read: its route template (the metric label), the version it fixes, its validators. */
interface ReadRoute {
  route: string;
  pathVersion: ApiVersion | null;
  validatePath: ValidateFunction;
  validateHeader: ValidateFunction;
  headerNames: readonly string[];
  integerHeaders: readonly string[];
}

const TEMPLATE = /^(?:\/v(\d+))?\/orders\/\{orderId\}$/;

/** The read's URL forms by method and the path before the id (`/orders/`, `/v1/orders/`), from the contract's route table. */
function readRoutes(): Map<string, Map<string, ReadRoute>> {
  const byMethod = new Map<string, Map<string, ReadRoute>>([
    ['GET', new Map()],
    ['HEAD', new Map()],
  ]);
  for (const spec of routes) {
    const m = TEMPLATE.exec(spec.path);
    const forMethod = byMethod.get(spec.method);
    if (!m || !forMethod || !spec.validate.path || !spec.validate.header) continue;
    const v = m[1] === undefined ? null : Number(m[1]);
    if (v !== null && !isVersion(v)) continue;
    forMethod.set(spec.path.slice(0, -'{orderId}'.length), {
      route: spec.path,
      pathVersion: v,
      validatePath: spec.validate.path,
      validateHeader: spec.validate.header,
      headerNames: spec.headerNames,
      integerHeaders: spec.headerNames.filter((n) => spec.integerParams.includes(n)),
    });
  }
  return byMethod;
}

export function orderReadRoute({ reads, authCache, essentials, rateLimit }: OrderReadRouteDeps): EdgeRoute {
  const byMethod = readRoutes();
  // Vary as the Koa path sends it: the handler's, plus Origin when CORS is on.
  const vary = essentials.vary(VARY);

  function send(req: IncomingMessage, res: ServerResponse, route: ReadRoute, path: string, account: Account, answer: ReadAnswer & { status: 200 | 304 }, limited: TakeResult | undefined): void {
    // The whole header block in one writeHead, nothing set before it (EdgeEssentials.beginFields says why).
    const fields: string[] = [];
    const begun = essentials.beginFields(req, fields);
    if (limited && rateLimit) rateLimit.pushFields(fields, limited);
    if (answer.status === 304) {
      fields.push('ETag', answer.etag, 'Cache-Control', CACHE_CONTROL, 'Vary', vary);
      res.writeHead(304, fields);
      res.end();
    } else {
      reads.served(account, answer.version);
      const { headers, payload, json, length } = answer.entry;
      fields.push('Content-Type', payload.contentType);
      for (const name in headers) fields.push(name, name === 'Vary' ? vary : headers[name]);
      fields.push('Content-Length', String(length));
      res.writeHead(200, fields);
      if (req.method === 'HEAD') res.end();
      else res.end(json);
    }
    essentials.end(req, route.route, answer.status, begun, path);
  }

  return function orderRead(req, res, next) {
    const forMethod = byMethod.get(req.method ?? '');
    const url = req.url ?? '';
    const slash = url.lastIndexOf('/');
    const route = forMethod?.get(url.slice(0, slash + 1));
    if (!route) return next();
    const rawId = url.slice(slash + 1);
    // A query string, or an id the binding refuses (400): Koa's.
    if (!CANONICAL_INTEGER.test(rawId)) return next();
    const params: { orderId: unknown } = { orderId: rawId };
    if (!route.validatePath(params)) return next();
    // The binding's header parameters: present when non-empty (ctx.get), integers in canonical form.
    const headers: Record<string, string> = {};
    for (const name of route.headerNames) {
      const value = req.headers[name.toLowerCase()];
      if (typeof value === 'string' && value !== '') headers[name] = value;
    }
    for (const name of route.integerHeaders) if (headers[name] !== undefined && !CANONICAL_INTEGER.test(headers[name])) return next();
    const typed = headers as Record<string, unknown>;
    if (!route.validateHeader(typed)) return next();
    const account = cachedAccount(req.headers.authorization, authCache);
    if (!account) return next();
    let handed = false;
    const decline = () => {
      // Nothing was written (send writes last): Koa answers, its problem+json included.
      if (handed || res.headersSent) return;
      handed = true;
      next();
    };
    const proceed = (answer: ReadAnswer): void => {
      if (answer.status !== 200 && answer.status !== 304) return decline();
      if (!rateLimit) return send(req, res, route, url, account, answer, undefined);
      // A refused take spends nothing: declined, Koa's own take refuses it the same way and answers the 429.
      const taking = rateLimit.spend(account.id);
      if (!(taking instanceof Promise)) return taking.admitted ? send(req, res, route, url, account, answer, taking) : decline();
      taking.then((taken) => (taken.admitted ? send(req, res, route, url, account, answer, taken) : decline())).catch(decline);
    };
    // Synchronous on SQLite with the representation cached (decide and take): no promise at all.
    try {
      const deciding = reads.decide(account, {
        orderId: params.orderId as number,
        pathVersion: route.pathVersion,
        accept: typed.Accept as string | undefined,
        apiVersion: typed['Api-Version'] as number | undefined,
        ifNoneMatch: typed['If-None-Match'] as string | undefined,
      });
      if (deciding instanceof Promise) deciding.then(proceed).catch(decline);
      else proceed(deciding);
    } catch {
      decline();
    }
  };
}
