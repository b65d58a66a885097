/**
 * The node:http request listener in front of Koa. A few routes are served on the raw
 * request: the order read (the hottest request, answered from the representation cache)
 * and long-lived SSE streams (a Koa context per idle stream is memory held for hours).
 * Koa's chain costs tens of microseconds a request (context objects, a promise per
 * middleware, header plumbing), which the issue-15 benchmarks put between us and a
 * hand-written Fastify service. Every other request, and every case an edge route
 * declines (it calls `next()`), goes to the Koa app unchanged.
 *
 * What every response owes whichever path serves it (request id, CORS, one log line,
 * the duration metric) is `EdgeEssentials`, built from the same rules the Koa middleware
 * uses (requestLog.ts, cors.ts, metrics.ts), so the two paths cannot drift apart.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { simpleCors } from './cors';
import { HttpTimer } from './metrics';
import { requestIdFor } from './requestLog';

/** Serves the request, or calls `next()` (synchronously or later, before writing anything) to leave it to the next route. */
export type EdgeRoute = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/** Tries each route in order; Koa (`fallback`) gets whatever none of them serves. */
export function edgeListener(routes: readonly EdgeRoute[], fallback: RequestListener): RequestListener {
  return routes.reduceRight<RequestListener>((rest, route) => (req, res) => route(req, res, () => rest(req, res)), fallback);
}

/** A response's id and start time, from `begin` to `end`. */
export interface Begun {
  id: string;
  started: bigint;
}

export class EdgeEssentials {
  private readonly cors: ReturnType<typeof simpleCors>;

  constructor(
    private readonly logger: Logger,
    private readonly timer: HttpTimer,
    corsOrigins: readonly string[],
  ) {
    this.cors = simpleCors(corsOrigins);
  }

  /**
   * Call when a route has decided to answer, before writing: sets `X-Request-Id` and the
   * CORS headers and returns the request's id and start time for `end`.
   */
  begin(req: IncomingMessage, res: ServerResponse): Begun {
    const fields: string[] = [];
    const begun = this.beginFields(req, fields);
    for (let i = 0; i < fields.length; i += 2) res.setHeader(fields[i], fields[i + 1]);
    return begun;
  }

  /**
   * The same, for a route that writes its whole header block with one
   * `res.writeHead(status, fields)`: appends `X-Request-Id` and the CORS fields to
   * `fields` (name, value, name, value...) instead of setting them. Why: one `setHeader`
   * puts node:http on its slow path (a lowercased-key map of [name, value] pairs, each
   * field validated on the way in); `writeHead` with a flat list and nothing set before
   * is the path Fastify takes, a few microseconds less per response.
   */
  beginFields(req: IncomingMessage, fields: string[]): Begun {
    const started = process.hrtime.bigint();
    const id = requestIdFor(req.headers['x-request-id']);
    fields.push('X-Request-Id', id);
    if (this.cors) {
      const { allowOrigin, exposeHeaders } = this.cors(req.headers.origin);
      if (allowOrigin !== undefined) fields.push('Access-Control-Allow-Origin', allowOrigin, 'Access-Control-Expose-Headers', exposeHeaders);
    }
    return { id, started };
  }

  /** The `Vary` value a route sends: its own, plus Origin when CORS is on (as corsMiddleware appends it). */
  vary(own: string): string {
    return this.cors ? (own === '' ? 'Origin' : `${own}, Origin`) : own;
  }

  /** Call once the response is written (a stream: when it closes): the log line and the duration metric. */
  end(req: IncomingMessage, route: string, status: number, begun: Begun, path: string): void {
    this.timer.observe(req.method ?? 'GET', route, status, begun.started);
    if (this.logger.isLevelEnabled('info')) {
      const ms = Number(process.hrtime.bigint() - begun.started) / 1e6;
      this.logger.info({ reqId: begun.id, method: req.method, path, status, ms: Math.round(ms * 100) / 100 }, 'request');
    }
  }
}
