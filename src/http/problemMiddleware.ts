import type { Middleware } from 'koa';
import { HttpProblem, PROBLEM_MEDIA_TYPE, problem, type ProblemCode, type Problem } from './problem';

/** Statuses koa and its body readers raise for client mistakes, mapped to our codes. */
const FROM_STATUS: Record<number, ProblemCode> = {
  400: 'BAD_REQUEST',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  501: 'METHOD_NOT_ALLOWED',
};

/**
 * First in the chain: every error below becomes an `application/problem+json`
 * response. Client errors keep their 4xx; anything unexpected is logged and becomes a
 * 500 without internals. An unmatched route falls through to a 404 problem.
 */
export function problemMiddleware(): Middleware {
  return async function problemMiddleware(ctx, next) {
    try {
      await next();
      if (ctx.body == null && (ctx.status === 405 || ctx.status === 501)) {
        // @koa/router's allowedMethods() set the status and Allow; 501 (a method no
        // route knows) is the client's doing too, so both answer 405 with Allow.
        throw new HttpProblem(problem('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed here`), { Allow: ctx.response.get('Allow') });
      }
      if (ctx.status === 404 && ctx.body == null) throw new HttpProblem(problem('NOT_FOUND', `No route for ${ctx.method} ${ctx.path}`));
    } catch (err) {
      let body: Problem;
      let headers: Record<string, string> = {};
      if (err instanceof HttpProblem) {
        body = err.problem;
        headers = err.headers;
      } else {
        const e = err as { status?: number; expose?: boolean; message?: string; headers?: Record<string, string> };
        const code = e.status && FROM_STATUS[e.status];
        if (code) {
          // 501 (unknown method) is the client's doing too: answered as 405 with Allow.
          body = problem(code, e.expose ? e.message : undefined);
          headers = e.headers ?? {};
        } else {
          ctx.state.log?.error({ err }, 'unhandled error');
          body = problem('INTERNAL');
        }
      }
      ctx.status = body.status;
      for (const [k, v] of Object.entries(headers)) ctx.set(k, v);
      // Also for HEAD: koa drops the body but keeps the status and headers.
      ctx.body = JSON.stringify(body);
      ctx.set('Content-Type', PROBLEM_MEDIA_TYPE);
    }
  };
}
