import type { Context, Middleware } from 'koa';
import Router from '@koa/router';
import type { Handlers } from '../../../generated/openapi/handlers';
import { bindOperations, type AnyResponse, type Invalid, type RawRequest } from '../../../generated/openapi/bind';
import { fieldErrors } from './fieldErrors';
import { serialized } from './representationCache';
import { routes, type RouteSpec } from '../../../generated/openapi/routes';
import { baseMediaType, readJsonBody, versionParam } from '../body';
import { httpProblem } from '../problem';
import { idempotent, IDEMPOTENT_OPERATIONS, type IdempotencyOptions } from './idempotency';

/** What a handler receives besides its typed request. */
export interface HandlerContext {
  koa: Context;
  /** The authenticated account; set on every operation whose contract requires a token. */
  account: NonNullable<Context['state']['account']>;
  /** The claimed Idempotency-Key (idempotency.ts): the handler's write stores its response with it. */
  idempotency?: { key: string; token: string };
}

export interface DispatchOptions {
  bodyLimit: number;
  /** Resolves the bearer token; throws a 401 HttpProblem. Runs before any validation. */
  authenticate: Middleware;
  /** Idempotency-Key on the operations that take it (idempotency.ts). */
  idempotency: IdempotencyOptions;
}

/** The generated binding's report of a request the contract refuses: a 400 problem. */
const invalid: Invalid = (where, errors) => {
  throw httpProblem('VALIDATION_FAILED', where === 'body' ? 'Invalid request body' : `Invalid ${where} parameter`, undefined, { errors: fieldErrors(where, errors) });
};

/**
 * The contract key of a request media type: the base type, plus `; version=N` when a
 * version (or its synonym `v`) parameter is given, as the contract spells its keys.
 */
export function contractMediaType(value: string | undefined): string {
  const base = baseMediaType(value);
  const v = value ? versionParam(value) : undefined;
  return v === undefined ? base : `${base}; version=${v}`;
}

/** The one accepted spelling of an integer parameter (also the edge's order read, edgeRead.ts). */
export const CANONICAL_INTEGER = /^-?(0|[1-9][0-9]{0,15})$/;

/** Reads the request off the wire; validation is the generated binding's (bind.ts). */
async function readRequest(ctx: Context, spec: RouteSpec, bodyLimit: number): Promise<RawRequest> {
  const params: Record<string, unknown> = { ...ctx.params };
  const query: Record<string, unknown> = { ...ctx.query };
  const headers: Record<string, unknown> = {};
  for (const name of spec.headerNames) {
    const v = ctx.get(name);
    if (v !== '') headers[name] = v;
  }
  // One resource, one URL: `/orders/01` or `/orders/1.` is not `/orders/1`.
  for (const [where, values] of [['path', params], ['query', query], ['header', headers]] as const) {
    for (const name of spec.integerParams) {
      const v = values[name];
      if (v !== undefined && (typeof v !== 'string' || !CANONICAL_INTEGER.test(v))) {
        throw httpProblem('VALIDATION_FAILED', `Invalid ${where} parameter`, undefined, { errors: [{ pointer: `${where}:${name}`, rule: 'integer', message: 'must be an integer in canonical decimal form' }] });
      }
    }
  }
  const req: RawRequest = { params, query, headers };
  if (spec.body) {
    const hasBody = ctx.request.length > 0 || ctx.get('transfer-encoding') !== '';
    if (!hasBody && !spec.body.required) return req;
    const contentType = contractMediaType(ctx.get('content-type'));
    if (!spec.body.contentTypes[contentType]) {
      const accepted = Object.keys(spec.body.contentTypes).join(', ');
      // RFC 5789 3.1: Accept-Patch belongs to a resource's PATCH; POST and PUT send none.
      throw httpProblem('UNSUPPORTED_MEDIA_TYPE', `Content-Type must be one of: ${accepted}`, spec.method === 'PATCH' ? { 'Accept-Patch': accepted } : {});
    }
    req.body = await readJsonBody(ctx, bodyLimit);
    req.contentType = contentType;
  }
  return req;
}

function write(ctx: Context, res: AnyResponse): void {
  ctx.status = res.status;
  if (res.body === undefined || res.status === 304) {
    // HEAD keeps GET's status: an empty string body (a null one would make koa answer 204);
    // the handler's Content-Type and Content-Length headers, set below, stand.
    ctx.body = ctx.method === 'HEAD' && res.status !== 304 ? '' : null;
  } else {
    // Content-Type first: koa then skips guessing one from the body (a mime lookup per response).
    if (res.contentType) ctx.set('Content-Type', res.contentType);
    const body = res.body;
    ctx.body = typeof body === 'string' ? body : ((body !== null && typeof body === 'object' && serialized.get(body)) || JSON.stringify(body));
  }
  for (const [k, v] of Object.entries(res.headers ?? {})) if (v !== '') ctx.set(k, v);
}

/**
 * Builds the router from the generated route table: each operation gets its
 * parameters and body validated by the generated validators (400 / 415 / 413 as
 * problem+json), then calls the handler with a typed request, then writes the
 * handler's typed response. No route is written by hand.
 */
export function dispatchRouter<C extends HandlerContext>(handlers: Handlers<C>, opts: DispatchOptions): Router {
  const router = new Router();
  const table = bindOperations(handlers, invalid);
  // HEAD operations first: @koa/router would otherwise answer HEAD with the GET route.
  const ordered = [...routes].sort((a, b) => Number(b.method === 'HEAD') - Number(a.method === 'HEAD'));
  for (const spec of ordered) {
    const handler = IDEMPOTENT_OPERATIONS.has(spec.operationId) ? idempotent(table[spec.operationId], opts.idempotency) : table[spec.operationId];
    const mw: Middleware[] = [
      async function route(ctx, next) {
        ctx.state.route = spec.path;
        ctx.state.operationId = spec.operationId;
        await next();
      },
    ];
    if (spec.auth) mw.push(opts.authenticate);
    mw.push(async function operation(ctx) {
      const req = await readRequest(ctx, spec, opts.bodyLimit);
      write(ctx, await handler(req, { koa: ctx, account: ctx.state.account } as C));
    });
    router.register(spec.koaPath, [spec.method], mw, { name: spec.operationId });
  }
  return router;
}
