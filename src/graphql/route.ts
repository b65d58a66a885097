/**
 * /graphql in the request pipeline (http/pipeline.ts): GET and POST. The pipeline has
 * matched the route and begun the exchange (request id, CORS); this authenticates with
 * the pipeline's authenticator, reads a POST body with the service's one body reader
 * (size limit, nesting bound), hands the request to the engine (engine.ts) and writes the
 * engine's answer with the one response writer. Refusals before the engine (401 with its
 * challenge, 413, an unreadable body) are answered in GraphQL's shape by the engine's
 * `refuse`, with `extensions.code`.
 *
 * A GET's 200 (a query, or a persisted one by its hash alone) is the account's own data:
 * `Cache-Control: private, no-cache` (a browser's cache may keep it, a shared one may not,
 * and either asks again each time) and a strong `ETag` of its bytes, so a client holding
 * the answer revalidates with If-None-Match and gets 304 without the body, through the
 * pipeline's one conditional step (http/conditional.ts `notModified`). A POST's answer has
 * neither (POST responses are not reused: RFC 9110 9.3.3). An APQ miss keeps its own
 * `Cache-Control` and no tag.
 */
import type { IncomingMessage } from 'node:http';
import type { Response } from 'graphql-http';
import { connectionClosing, contentTag, isRefusal, NOT_RUN, notModified, readRequestText, send, type Exchange, type Finalizer, type Refusal, type TransportRoute } from '../http';
import type { Account } from '../store';
import { GRAPHQL_PATH, type GraphqlEngine } from './engine';

export interface GraphqlRouteDeps {
  engine: GraphqlEngine;
  finalizer: Finalizer;
  /** The pipeline's authentication step (http/pipeline.ts `authenticator`). */
  authenticate: (req: IncomingMessage) => Promise<Account | Refusal>;
  bodyLimit: number;
}

/** A GET 200's caching policy (see above). */
export const GET_CACHE_CONTROL = 'private, no-cache';

export function graphqlRoute({ engine, finalizer, authenticate, bodyLimit }: GraphqlRouteDeps): TransportRoute {
  /**
   * The engine's answer through the one response writer. Every answer names `Accept` in
   * `Vary`: its media type is negotiated from it (application/graphql-response+json or
   * application/json), so a cache keeping a GET's answer must not hand it to a client that
   * asked for the other.
   */
  function write(x: Exchange, [body, init]: Response): number {
    const headers = init.headers ?? {};
    const method = x.req.method;
    if (init.status === 200 && (method === 'GET' || method === 'HEAD') && body && !Object.keys(headers).some((n) => n.toLowerCase() === 'cache-control')) {
      const validators = { ETag: contentTag(body), 'Cache-Control': GET_CACHE_CONTROL };
      const unchanged = notModified(method, x.req.headers['if-none-match'], { status: 200, headers: validators });
      if (unchanged) {
        for (const name in unchanged.headers) x.fields.push(name, unchanged.headers[name]);
        return send(finalizer, x, 304, 'Accept', undefined);
      }
      x.fields.push('ETag', validators.ETag, 'Cache-Control', GET_CACHE_CONTROL);
    }
    let vary = 'Accept';
    for (const name in headers) {
      const value = headers[name];
      if (name.toLowerCase() === 'vary') vary = `${value}, Accept`;
      else x.fields.push(name, value);
    }
    return send(finalizer, x, init.status, vary, body ?? '');
  }

  async function serve(x: Exchange): Promise<number> {
    const req = x.req;
    const accept = req.headers.accept || undefined;
    const account = await authenticate(req);
    if (isRefusal(account)) return write(x, await engine.refuse(account, accept, undefined));
    let body: string | null = null;
    if (req.method === 'POST') {
      const text = await readRequestText(req, bodyLimit);
      if (typeof text !== 'string') return write(x, await engine.refuse(text, accept, account));
      body = text;
    }
    // HEAD is the GET without its body (the response writer leaves it out).
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    // Pipelined behind an answer that closes the connection (http/respond.ts): not run (a mutation would be a change never answered).
    if (connectionClosing(x)) return write(x, await engine.refuse(NOT_RUN, accept, account));
    return write(x, await engine.serve({ method, url: req.url ?? GRAPHQL_PATH, headers: req.headers, body, account }));
  }

  /** The pipeline's refusals (405 for another method) in GraphQL's shape, with `extensions.code`, as every /graphql error. */
  async function refuse(x: Exchange, r: Refusal): Promise<number> {
    return write(x, await engine.refuse(r, x.req.headers.accept || undefined, undefined));
  }

  return { route: GRAPHQL_PATH, methods: new Set(['GET', 'POST']), matches: (path) => path === GRAPHQL_PATH, serve, refuse };
}
