/**
 * What every HTTP response owes, whichever route answers it: the request id
 * (`X-Request-Id`, echoed when the client's is short and plain), the CORS fields, `Vary:
 * Origin` when CORS is on, one log line and the duration metric. One implementation:
 * the pipeline (pipeline.ts) and the Koa shell (koaShell.ts) both call it.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { corsPolicy, type CorsPolicy } from './cors';
import type { HttpTimer } from './metrics';
import type { UnparsedLine } from './upgrade';

/** A client-sent request id is kept only if it is short and plain (it ends up in logs). */
const CLIENT_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The request's id: the client's `X-Request-Id` when short and plain, a fresh UUID otherwise. */
export function requestIdFor(sent: string | string[] | undefined): string {
  return typeof sent === 'string' && CLIENT_ID.test(sent) ? sent : randomUUID();
}

/** A request target's path and query (without `?`): logs name the path alone (a query may carry `access_token`). */
export function splitTarget(url: string): [path: string, search: string] {
  const q = url.indexOf('?');
  return q < 0 ? [url, ''] : [url.slice(0, q), url.slice(q + 1)];
}

/** Characters of a request path a log line keeps (a 16 KiB target would make a line log collectors split): the rest is counted. */
export const LOGGED_PATH_CHARS = 1024;

/** A path as a log line names it: whole when short, else its first LOGGED_PATH_CHARS and how long it was. */
export const loggedPath = (path: string): string => (path.length <= LOGGED_PATH_CHARS ? path : `${path.slice(0, LOGGED_PATH_CHARS)}... (${path.length} characters)`);

/**
 * When each request whose answer is written on the raw socket arrived (a WebSocket handshake,
 * stamped where the server's 'upgrade' event is taken, realtime and drain: noteArrival), so its log line and metric
 * count the time it waited (the admission queue of a reconnect storm, a token the store was slow to check).
 */
const arrivals = new WeakMap<IncomingMessage, bigint>();
export function noteArrival(req: IncomingMessage): void {
  arrivals.set(req, process.hrtime.bigint());
}

/**
 * The status actually sent to a routed request whose answer was written on the raw socket in
 * place of its route's (a body not sent in time: 408, upgrade.ts): its exchange logs that
 * status, not the one its route would have answered and could not send.
 */
const answeredRaw = new WeakMap<IncomingMessage, number>();
export function noteRawAnswer(req: IncomingMessage, status: number): void {
  answeredRaw.set(req, status);
}

/** The id each request routed so far was given (begin), for an answer written outside its exchange (upgrade.ts). */
const assigned = new WeakMap<IncomingMessage, string>();

/** Whether `req` was routed (has an exchange, which logs its answer). */
export function wasRouted(req: IncomingMessage): boolean {
  return assigned.has(req);
}

/** The id `req` was given when routed; a request never routed gets one now, by the same rule. */
export function requestIdOf(req: IncomingMessage): string {
  return assigned.get(req) ?? requestIdFor(req.headers['x-request-id']);
}

/**
 * One request on its way through the service, from routing to the last byte: who asked,
 * since when, and the header fields every answer to it carries.
 */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly id: string;
  readonly started: bigint;
  /** The request path without its query. */
  readonly path: string;
  /** The query string without `?` ('' when there is none). */
  readonly search: string;
  /**
   * Fields of the response head as name, value pairs: `X-Request-Id` and the CORS fields
   * first, then whatever the route adds. Written with one `writeHead(status, fields)`: one
   * `setHeader` would put node:http on its slow path (a lowercased-key map, each field
   * validated on the way in), a few microseconds per response.
   */
  readonly fields: string[];
  /** The route template (metric label and log field): the contract's path, or `unmatched`. */
  route: string;
  /** Fields every answer of the operation carries, its 500 included (an operation deprecated on its own: Deprecation, Sunset, Link). */
  always?: readonly string[];
  /** Its place among the exchanges begun (one counter for the process): of two requests on one connection, the later one's is higher. */
  readonly seq: number;
}

let begun = 0;

export class Finalizer {
  readonly cors: CorsPolicy | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly timer: HttpTimer,
    corsOrigins: readonly string[],
    corsAllowHeaders: readonly string[] = [],
  ) {
    this.cors = corsPolicy(corsOrigins, corsAllowHeaders);
  }

  /** Starts an exchange: its id, start time and the fields every answer carries. */
  begin(req: IncomingMessage, res: ServerResponse, path: string, search: string): Exchange {
    const started = process.hrtime.bigint();
    const id = requestIdFor(req.headers['x-request-id']);
    assigned.set(req, id);
    const fields = ['X-Request-Id', id];
    if (this.cors) this.cors.simple(req.headers.origin, fields);
    return { req, res, id, started, path, search, fields, route: 'unmatched', seq: ++begun };
  }

  /**
   * Drops every field added since `begin` but the request id: a preflight's answer (`preflight`:
   * its own CORS fields, no Expose-Headers), or an answer that replaces the one begun (`simple`:
   * the CORS fields again, as `begin` put them).
   */
  resetFields(x: Exchange, cors: 'preflight' | 'simple', preflight: readonly string[] = []): void {
    x.fields.length = 2; // X-Request-Id and its value, which begin puts first
    if (cors === 'simple') this.cors?.simple(x.req.headers.origin, x.fields);
    else x.fields.push(...preflight);
  }

  /** The `Vary` value of a response: the route's own, plus Origin when CORS is on (an answer then depends on it). */
  vary(own: string | undefined): string | undefined {
    if (!this.cors) return own;
    return own === undefined || own === '' ? 'Origin' : `${own}, Origin`;
  }

  /** Once the response is written (a stream: once its head and replay are out): the log line and the duration metric. */
  end(x: Exchange, answered: number): void {
    const status = answeredRaw.get(x.req) ?? answered;
    this.timer.observe(x.req.method ?? 'GET', x.route, status, x.started);
    if (this.logger.isLevelEnabled('info')) {
      const ms = Number(process.hrtime.bigint() - x.started) / 1e6;
      this.logger.info({ reqId: x.id, method: x.req.method, path: loggedPath(x.path), route: x.route, status, ms: Math.round(ms * 100) / 100 }, 'request');
    }
  }

  /**
   * An answer written on the raw socket, outside any exchange (a request node could not
   * parse, a CONNECT, a WebSocket handshake refused or accepted, whose metric is then its
   * endpoint's route): the same log line and metric as every
   * other answer, so the id the client was given is found in the log. `req` is undefined
   * when node read no request: the method is then the one of `line`, the request line when it
   * was well formed (an unknown method: its metric label is `OTHER`, metrics.ts), else
   * `UNPARSED`. A routed request's answer is its exchange's to log, not this.
   */
  rawAnswer(req: IncomingMessage | undefined, status: number, id: string, route = 'unmatched', line?: UnparsedLine): void {
    const method = req?.method ?? line?.method.slice(0, 32) ?? 'UNPARSED';
    const target = req?.url ?? line?.target;
    const now = process.hrtime.bigint();
    const started = (req && arrivals.get(req)) ?? now;
    this.timer.observe(method, route, status, started);
    if (this.logger.isLevelEnabled('info')) {
      const ms = Number(now - started) / 1e6;
      this.logger.info({ reqId: id, method, path: target === undefined ? null : loggedPath(splitTarget(target)[0]), route, status, ms: Math.round(ms * 100) / 100 }, 'request');
    }
  }

  /** An error that is not the client's, with the request's id. */
  error(x: Pick<Exchange, 'id'>, err: unknown): void {
    this.logger.error({ err, reqId: x.id }, 'unhandled error');
  }
}
