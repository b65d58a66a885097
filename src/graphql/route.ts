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
 * and either asks again each time) and an `ETag` (getTag below), so a client holding the
 * answer revalidates with If-None-Match and gets 304 without the body, through the
 * pipeline's one conditional step for reads (http/conditional.ts `judgeRead`), which also
 * judges If-Match first (412 `PRECONDITION_FAILED` when it names no tag of the answer, RFC
 * 9110 13.1.1). A POST's answer has
 * neither (POST responses are not reused: RFC 9110 9.3.3); its If-Match and If-None-Match
 * are judged as on a REST create (the endpoint exists and has no tag: only `If-Match: *`
 * holds, `If-None-Match: *` fails, 412; a field that is no list of tags is 400). An APQ miss keeps its own
 * `Cache-Control` and no tag.
 */
import type { IncomingMessage } from 'node:http';
import type { Response } from 'graphql-http';
import {
  connectionClosing,
  contentTag,
  dropRequestBody,
  isRefusal,
  sendsBody,
  NOT_RUN,
  judgeRead,
  notModified,
  readRequestText,
  refusal,
  send,
  writePreconditions,
  type Exchange,
  type Finalizer,
  type Refusal,
  type TransportRoute,
} from '../http';
import type { Account } from '../store';
import { parseMediaType, readsAsUtf8 } from '../http/mediaType';
import { GRAPHQL_PATH, type GraphqlEngine } from './engine';

/**
 * Whether a POST body's Content-Type is JSON in UTF-8: `application/json` with no charset
 * or a UTF-8 one, read by the service's one media-type parser (which keeps its parses).
 */
function takesJson(contentType: string | undefined): boolean {
  const media = contentType === undefined ? null : parseMediaType(contentType);
  return media?.type === 'application/json' && readsAsUtf8(media);
}
/** The 415's detail. */
const TAKES_JSON = 'POST /graphql takes application/json (UTF-8)';

export interface GraphqlRouteDeps {
  engine: GraphqlEngine;
  finalizer: Finalizer;
  /** The pipeline's authentication step (http/pipeline.ts `authenticator`). */
  authenticate: (req: IncomingMessage) => Promise<Account | Refusal>;
  bodyLimit: number;
}

/** What an answer's `extensions.cost` says was charged for it (0 without the cost budget). */
function chargedBy(body: string | null): number {
  if (body === null || !body.includes('"requestedQueryCost":')) return 0;
  const answer: unknown = JSON.parse(body);
  if (typeof answer !== 'object' || answer === null || !('extensions' in answer) || typeof answer.extensions !== 'object' || answer.extensions === null || !('cost' in answer.extensions)) return 0;
  const cost = answer.extensions.cost;
  return typeof cost === 'object' && cost !== null && 'requestedQueryCost' in cost && typeof cost.requestedQueryCost === 'number' ? cost.requestedQueryCost : 0;
}

/** A GET 200's caching policy (see above). */
export const GET_CACHE_CONTROL = 'private, no-cache';

/**
 * A GET 200's entity tag. Strong, over its media type and its bytes: the
 * application/json and application/graphql-response+json answers of one query are two
 * representations, each with its own tag (RFC 9110 8.8.1), as REST's versions and media
 * types are. With the cost budget on, every answer carries the account's bucket as it
 * stands (`extensions.cost`), which changes with each request: the tag is then weak, over
 * the answer without `extensions.cost`, so an unchanged result still revalidates (304)
 * while no two answers claim to be the same bytes.
 */
export function getTag(body: string, contentType: string): string {
  if (body.includes('"extensions":')) {
    const answer: unknown = JSON.parse(body);
    if (typeof answer === 'object' && answer !== null && 'extensions' in answer && typeof answer.extensions === 'object' && answer.extensions !== null && 'cost' in answer.extensions) {
      const { cost: _cost, ...extensions } = answer.extensions;
      return `W/${contentTag(`${contentType}\n${JSON.stringify({ ...answer, extensions })}`)}`;
    }
  }
  return contentTag(`${contentType}\n${body}`);
}

export function graphqlRoute({ engine, finalizer, authenticate, bodyLimit }: GraphqlRouteDeps): TransportRoute {
  /**
   * The engine's answer through the one response writer. Every answer names `Accept` in
   * `Vary`: its media type is negotiated from it (application/graphql-response+json or
   * application/json), so a cache keeping a GET's answer must not hand it to a client that
   * asked for the other.
   */
  function write(x: Exchange, [body, init]: Response, etag?: string, unchanged?: boolean): number {
    const headers = init.headers ?? {};
    if (etag !== undefined) {
      if (unchanged) {
        const { headers: fields } = notModified({ headers: { ETag: etag, 'Cache-Control': GET_CACHE_CONTROL } });
        for (const name in fields) x.fields.push(name, fields[name]);
        return send(finalizer, x, 304, 'Accept', undefined);
      }
      x.fields.push('ETag', etag, 'Cache-Control', GET_CACHE_CONTROL);
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
      // Its media type before its body: a body that would be refused is never asked for (no 100 Continue), nor read.
      if (!takesJson(req.headers['content-type'])) return write(x, await engine.refuse(refusal('UNSUPPORTED_MEDIA_TYPE', TAKES_JSON), accept, account));
      const text = await readRequestText(req, bodyLimit);
      if (typeof text !== 'string') return write(x, await engine.refuse(text, accept, account));
      body = text;
    } else if (sendsBody(req)) {
      // A GET takes no body: one sent is read and dropped under the same limit before the query runs, as on REST (http/body.ts).
      const dropped = await dropRequestBody(req, bodyLimit);
      if (dropped) return write(x, await engine.refuse(dropped, accept, account));
    }
    // HEAD is the GET without its body (the response writer leaves it out).
    const method = req.method === 'POST' ? 'POST' : 'GET';
    // Pipelined behind an answer that closes the connection (http/respond.ts): not run (a mutation would be a change never answered).
    if (connectionClosing(x)) return write(x, await engine.refuse(NOT_RUN, accept, account));
    // A POST's If-Match and If-None-Match, judged as on a REST create: the endpoint has no tag (only If-Match: * holds, If-None-Match: * fails).
    const precondition = writePreconditions(req);
    if (precondition) return write(x, await engine.refuse(precondition, accept, account));
    const answer = await engine.serve({ method, url: req.url ?? GRAPHQL_PATH, headers: req.headers, body, account, requestId: x.id });
    if (!cacheable(answer, method)) return write(x, answer);
    const etag = getTag(answer[0], answer[1].headers?.['content-type'] ?? '');
    // The pipeline's conditional step for reads, on the answer the query got: If-Match (412), then If-None-Match (304).
    const verdict = judgeRead(method, req.headers, 200, etag);
    if (verdict === 'precondition_failed') {
      // The query ran (the tag is its answer's): the 412 says what the budget charged for it.
      return write(x, await engine.refuse(refusal('PRECONDITION_FAILED', 'If-Match names no tag of this answer'), accept, account, chargedBy(answer[0])));
    }
    return write(x, answer, etag, verdict === 'not_modified');
  }

  /** A GET's 200 with a body, the engine setting no caching policy of its own (an APQ miss does): tagged and revalidated. */
  function cacheable(answer: Response, method: 'GET' | 'POST'): answer is readonly [string, Response[1]] {
    const [body, init] = answer;
    return init.status === 200 && method === 'GET' && typeof body === 'string' && body !== '' && !Object.keys(init.headers ?? {}).some((n) => n.toLowerCase() === 'cache-control');
  }

  /** The pipeline's refusals (405 for another method) in GraphQL's shape, with `extensions.code`, as every /graphql error. */
  async function refuse(x: Exchange, r: Refusal): Promise<number> {
    return write(x, await engine.refuse(r, x.req.headers.accept || undefined, undefined));
  }

  return { route: GRAPHQL_PATH, methods: new Set(['GET', 'POST']), matches: (path) => path === GRAPHQL_PATH, serve, refuse };
}
