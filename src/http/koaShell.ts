/**
 * The Koa application's one middleware of the service's own, first in its chain: what
 * users mount behind it (their middleware and @koa/router routes, for paths the contracts
 * do not declare) gets the same request id, CORS fields, problem+json errors, log line and
 * duration metric as the pipeline's routes, from the same functions (finalize.ts,
 * problem.ts, cors.ts): a thin shell over them. Two rules the service keeps for every
 * request are kept here too: a declared body over the body limit is 413 before any user
 * middleware runs (a route reading `ctx.req` itself would read it all; with
 * `Expect: 100-continue` it would wait for a body the client was never asked for), and a
 * 401 carries the service's `WWW-Authenticate` challenge unless the route set its own.
 * A chunked body's size is the route's to bound: the shell cannot count it without reading it;
 * what the route leaves unread is not read after its answer, which closes the connection.
 */
import type { Middleware } from 'koa';
import type { Finalizer } from './finalize';
import { methodNotAllowed, PROBLEM_MEDIA_TYPE, refusal, refusalForStatus, refusalOf, type Refusal } from './problem';
import { problemText } from './respond';
import { BEARER_CHALLENGE } from './auth';
import { continueIfOwed, declaresOverLimit, leavesBodyUnread, tooLarge } from './body';

/**
 * The route template of a request the Koa application answered (metric label, log field):
 * the @koa/router route that served it; for a 405, the route whose path matched
 * (`ctx.matched`: the layers of the path, whatever the method); else `unmatched`.
 */
function routeOf(matchedRoute: unknown, matched: unknown): string {
  if (typeof matchedRoute === 'string') return matchedRoute;
  const layers = Array.isArray(matched) ? (matched as { path?: unknown; methods?: unknown }[]) : [];
  const route = [...layers].reverse().find((l) => Array.isArray(l.methods) && l.methods.length > 0 && typeof l.path === 'string');
  return typeof route?.path === 'string' ? route.path : 'unmatched';
}

export function koaShell(fin: Finalizer, bodyLimit: number): Middleware {
  return async function orderlineShell(ctx, next) {
    const x = fin.begin(ctx.req, ctx.res, ctx.path, ctx.querystring);
    ctx.state.requestId = x.id;
    const answer = (r: Refusal) => {
      ctx.status = r.problem.status;
      if (r.headers) ctx.set(r.headers);
      ctx.body = problemText(r); // HEAD: Koa sends the head alone, with this length
      ctx.type = PROBLEM_MEDIA_TYPE;
    };
    try {
      if (declaresOverLimit(ctx.req, bodyLimit)) {
        answer(tooLarge(bodyLimit));
      } else {
        continueIfOwed(ctx.req); // a route here may read the body: the client waiting on 100 Continue is told to send it
        await next();
        // @koa/router's allowedMethods() answers OPTIONS 200 with an empty body and the path's
        // methods in Allow: the service's one OPTIONS rule is 204 with Allow naming OPTIONS too,
        // as on every contract path, and a CORS preflight allows those methods (on a path no
        // route serves, every method the service has: the request it announces gets its 404).
        const allowed = ctx.response.get('Allow');
        if (ctx.method === 'OPTIONS' && !ctx.body && (ctx.status === 404 || (ctx.status === 200 && allowed))) {
          const preflight = fin.cors?.preflight(ctx.get('origin') || undefined, ctx.get('access-control-request-method') || undefined, allowed || undefined);
          if (preflight) fin.resetFields(x, 'preflight', preflight);
          if (preflight || allowed) ctx.status = 204;
          if (allowed && !/\bOPTIONS\b/.test(allowed)) ctx.set('Allow', `${allowed}, OPTIONS`);
        }
        // An error status left without a body (a route's `ctx.status = 403`, @koa/router's
        // allowedMethods() 405 or 501 with Allow) is answered as every refusal is, problem+json.
        // 501 there means a method no route implements: the client's, 405 like any other.
        if (ctx.body == null && ctx.status >= 400) {
          // Allow names OPTIONS too, which every path answers (as a contract path's 405 says).
          const listed = ctx.response.get('Allow');
          const allow = listed && !/\bOPTIONS\b/.test(listed) ? `${listed}, OPTIONS` : listed;
          const fields = allow ? { Allow: allow } : undefined;
          // The path alone: a HEAD's answer then has its GET's fields, Content-Length included (RFC 9110 9.3.2).
          if (ctx.status === 404) answer(refusal('NOT_FOUND', `No route for ${ctx.path}`));
          else if (ctx.status === 405 || (ctx.status === 501 && allow)) answer(methodNotAllowed(ctx.method, allow));
          else answer(refusalForStatus(ctx.status, undefined, fields) ?? refusal('INTERNAL'));
        }
      }
    } catch (err) {
      const known = refusalOf(err);
      if (!known) fin.error(x, err);
      answer(known ?? refusal('INTERNAL'));
    } finally {
      for (let i = 0; i < x.fields.length; i += 2) ctx.set(x.fields[i], x.fields[i + 1]);
      if (ctx.status === 401 && !ctx.response.get('WWW-Authenticate')) ctx.set('WWW-Authenticate', BEARER_CHALLENGE);
      const vary = fin.vary(ctx.response.get('Vary') || undefined);
      if (vary !== undefined) ctx.set('Vary', vary);
      // A body the route left unread is not read after the answer: the connection ends with it (body.ts leavesBodyUnread).
      if (!ctx.headerSent && leavesBodyUnread(ctx.req)) ctx.set('Connection', 'close');
      x.route = routeOf(ctx._matchedRoute, ctx.matched);
    }
    // After Koa has written the response: the log line and metric see its final status.
    ctx.res.once('close', () => fin.end(x, ctx.status));
  };
}

/** A route of a user's @koa/router router that the pipeline answers for, named for the start-up warning. */
export interface UnreachableRoute {
  /** The route's methods (HEAD left out where @koa/router added it beside GET; `*` for every method). */
  methods: string;
  /** The route's path as registered, prefixes included. */
  path: string;
  /** The pipeline's route template it matches (a contract path, `/graphql`, the event stream). */
  owner: string;
}

/** The part of an @koa/router Layer read here (typed by hand: what `router.routes()` carries is typed as plain middleware). */
interface RouterLayer {
  path: unknown;
  methods: unknown;
  match(path: string): boolean;
}
const isLayer = (l: unknown): l is RouterLayer => typeof l === 'object' && l !== null && 'match' in l && typeof l.match === 'function' && 'path' in l && 'methods' in l;
const layersOf = (middleware: unknown): RouterLayer[] => {
  const router: unknown = typeof middleware === 'function' && 'router' in middleware ? middleware.router : undefined;
  const stack: unknown = typeof router === 'object' && router !== null && 'stack' in router ? router.stack : undefined;
  return Array.isArray(stack) ? stack.filter(isLayer) : [];
};

/**
 * The routes mounted on the Koa application (`app.use(router.routes())`) that match a path
 * the pipeline serves: every request to such a path is answered by the pipeline, whatever
 * its method, so the route is never reached there. Nothing else would say so (the request
 * is answered, by someone else), so the service logs each at start. `templates` are the
 * pipeline's route templates; each is tried with its parameters filled in (`{orderId}` -> `1`)
 * against each route's own matcher. Middleware that is not a router is not looked into.
 */
export function unreachableRoutes(middleware: readonly unknown[], templates: readonly string[]): UnreachableRoute[] {
  const found: UnreachableRoute[] = [];
  for (const layer of middleware.flatMap(layersOf)) {
    const methods = Array.isArray(layer.methods) ? layer.methods.filter((m): m is string => typeof m === 'string') : [];
    if (methods.length === 0) continue; // router.use(): middleware of the router, not a route
    // With a trailing slash too: the pipeline answers that spelling of its paths (a 404 naming the path), so a route there is not reached either.
    const owner = templates.find((t) => [t.replace(/\{[^}]+\}/g, '1'), `${t.replace(/\{[^}]+\}/g, '1')}/`].some((sample) => layer.match(sample)));
    if (owner === undefined) continue;
    const named = methods.includes('GET') ? methods.filter((m) => m !== 'HEAD') : methods;
    found.push({ methods: named.length > 20 ? '*' : [...new Set(named)].join(', '), path: String(layer.path), owner });
  }
  return found;
}
