/**
 * POST /graphql served on raw node:http before Koa (http/edge.ts). The Koa chain
 * (context objects, a promise per middleware, header plumbing) was the largest item of
 * a cached query's CPU after SQLite (BENCHMARKS.md, "Where a /graphql request's CPU
 * goes"), and the issue-19 target is measured against servers that do not pay it.
 *
 * It takes only a POST to exactly `/graphql` whose bearer token the auth cache already
 * knows; everything else (GET, a query string, no token, a token not yet seen, a
 * preflight) goes to Koa, whose middleware (http.ts) hands the same engine the same
 * request. From the moment it takes a request the route answers it whatever happens,
 * as the Koa path would: the body is read from the socket, so Koa could not read it
 * again. test/integration/graphqlEdge.test.ts proves both paths give the same answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Response } from 'graphql-http';
import { cachedAccount, HttpProblem, httpProblem, readRequestText, writeProblem, type AuthCache, type EdgeEssentials, type EdgeRoute } from '../http';
import type { Account } from '../store';
import { GRAPHQL_PATH, type GraphqlEngine } from './http';

export interface GraphqlRouteDeps {
  engine: GraphqlEngine;
  authCache: AuthCache;
  essentials: EdgeEssentials;
  bodyLimit: number;
  /** Where an unexpected error is reported, with the request's id (the Koa path logs it in problemMiddleware). */
  onError: (err: unknown, reqId: string) => void;
}

export function graphqlRoute({ engine, authCache, essentials, bodyLimit, onError }: GraphqlRouteDeps): EdgeRoute {
  // Vary as the Koa path sends it: nothing of its own, Origin when CORS is on.
  const vary = essentials.vary('');

  /** Writes `response` as Koa writes the middleware's answer (body, status, headers; a null body is empty). */
  function write(res: ServerResponse, [body, init]: Response, fields: string[]): void {
    if (vary !== '') fields.push('Vary', vary);
    const headers = init.headers ?? {};
    let contentType = false;
    for (const name in headers) {
      if (name.toLowerCase() === 'content-type') contentType = true;
      fields.push(name, headers[name as keyof typeof headers]);
    }
    if (body === null) {
      fields.push('Content-Length', '0');
      res.writeHead(init.status, init.statusText || undefined, fields);
      res.end();
      return;
    }
    // Koa's type for a string body that says none; graphql-http and the engine always say one.
    if (!contentType) fields.push('Content-Type', 'text/plain; charset=utf-8');
    fields.push('Content-Length', String(Buffer.byteLength(body)));
    res.writeHead(init.status, init.statusText || undefined, fields);
    res.end(body);
  }

  /**
   * The 500 problem+json problemMiddleware gives an unexpected error. `answer` writes
   * nothing, so nothing has been sent when it fails; a throw while writing (after the
   * head went out) ends the socket instead, as Koa does.
   */
  function fail(res: ServerResponse, fields: string[], reqId: string, err: unknown): number {
    onError(err, reqId);
    if (res.headersSent) {
      res.destroy();
      return 500;
    }
    if (vary !== '') fields.push('Vary', vary);
    for (let i = 0; i < fields.length; i += 2) res.setHeader(fields[i], fields[i + 1]);
    const problem = httpProblem('INTERNAL');
    writeProblem(res, problem);
    return problem.status;
  }

  async function answer(req: IncomingMessage, account: Account): Promise<Response> {
    let body: string;
    try {
      body = await readRequestText(req, bodyLimit);
    } catch (err) {
      if (!(err instanceof HttpProblem) || err.status >= 500) throw err;
      return engine.refuse(err, req.headers.accept || undefined, account);
    }
    return engine.serve({ method: 'POST', url: GRAPHQL_PATH, headers: req.headers, body, raw: req, account });
  }

  return function graphql(req, res, next) {
    if (req.method !== 'POST' || req.url !== GRAPHQL_PATH) return next();
    const account = cachedAccount(req.headers.authorization, authCache);
    if (!account) return next();
    // Taken: from here on this route answers, whatever happens.
    const fields: string[] = [];
    const begun = essentials.beginFields(req, fields);
    answer(req, account)
      .then((response) => {
        write(res, response, fields);
        return response[1].status;
      })
      .catch((err: unknown) => fail(res, fields, begun.id, err))
      // Nothing may reject unhandled (Node would exit): a failure of the log line itself is reported.
      .then((status) => essentials.end(req, GRAPHQL_PATH, status, begun, GRAPHQL_PATH))
      .catch((err: unknown) => onError(err, begun.id));
  };
}
