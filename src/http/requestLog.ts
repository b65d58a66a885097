import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

/** A client-sent request id is kept only if it is short and plain (it ends up in logs). */
const CLIENT_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The request's state object: its id, and a child logger bound to it made on first use
 * (most requests never log below info). A getter on a class, not one defined per request
 * with Object.defineProperty (which costs on every request).
 */
class RequestState {
  #child?: Logger;
  readonly #logger: Logger;

  constructor(
    logger: Logger,
    readonly requestId: string,
  ) {
    this.#logger = logger;
  }

  get log(): Logger {
    return (this.#child ??= this.#logger.child({ reqId: this.requestId }));
  }
}

/** The request's id: the client's `X-Request-Id` when short and plain, a fresh UUID otherwise. */
export function requestIdFor(sent: string | string[] | undefined): string {
  return typeof sent === 'string' && CLIENT_ID.test(sent) ? sent : randomUUID();
}

/**
 * Gives each request an id (`X-Request-Id`, echoed back), a child logger bound to it
 * in `ctx.state.log`, and one structured log line when the response is done.
 */
export function requestLog(logger: Logger): Middleware {
  return async function requestLog(ctx, next) {
    const id = requestIdFor(ctx.get('x-request-id'));
    ctx.state = new RequestState(logger, id);
    ctx.set('X-Request-Id', id);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      if (logger.isLevelEnabled('info')) {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        logger.info({ reqId: id, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 100) / 100 }, 'request');
      }
    }
  };
}
