/**
 * POST and GET /graphql, GraphQL over HTTP. The engine (`graphqlEngine`) takes a request
 * whose caller is known and whose body has been read: the route (route.ts) authenticates
 * and reads the body with the service's one body reader (http/body.ts, with its size
 * limit), then calls `serve` with method, url, headers, the body text and the caller.
 * The route has judged the method (GET or POST, HEAD as GET) and a POST's media type
 * (415 before its body is read): the engine judges neither again.
 * Nothing travels beside it (no adapter, no state keyed on the raw request). Each step is
 * one function:
 *
 * - Accept (`acceptedMediaType`): RFC 9110 negotiation of the two GraphQL JSON types (406
 *   when neither fits);
 * - `readParams`: the parameters of a GET's query string or a POST's body, batches are refused, and a hash-only APQ request
 *   (no `query`) is accepted;
 * - `admitRequest`: the persisted-operation step (APQ or allowlist), parsing with a token
 *   limit and graphql-js's rules (cached per text, documents.ts), then depth, cost and
 *   `first` registered together in one pass on every request (built per request:
 *   `first` may come from variables). A failure answers HTTP 400 whatever the Accept
 *   header, `extensions.code` GRAPHQL_VALIDATION_FAILED and no `data`: graphql-http's
 *   handler would answer 200 to `application/json` clients; orderline answers every
 *   request error with a 4xx (README, "Decisions"). Execution only ever sees a validated
 *   document, and nothing is registered (APQ) or charged (cost budget) for a refusal;
 * - execution: graphql-jit's compiled form for documents that come back (compiled.ts);
 * - `respond`: a request error found while executing (variables that do not coerce) is a
 *   400 too, not a 200 without data; the store's outage a 503.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { GraphQLError, getOperationAST, getVariableValues, OperationTypeNode, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { RequestParams, Response } from 'graphql-http';
import { parseClientJson } from '../http/body';
import { readQuery, type Query } from '../http/query';
import { acceptIsEmpty, parseAccept, qualityOf, type Range } from '../http/rest/negotiate';
import { isRefusal, STORE_RETRY_AFTER_S, type ProblemCode, type Refusal } from '../http/problem';
import { StoreUnavailableError, type Account, type Store } from '../store';
import { compiledExecutor } from './compiled';
import { coded, GRAPHQL_CODES, type GraphqlCode } from './errors';
import { createLoaders } from './loaders';
import { manifestMap, resolveOperation, type PersistedMode } from './persisted';
import type { PersistedQueryRegistry } from './registry';
import type { GraphqlContext } from './resolvers';
import { createSchema } from './schema';
import { DocumentCache } from './documents';
import { documentRules, variableRules } from './rules';
import { outcomeOf } from './outcome';
import type { CostBudget, CostExtension } from './costBudget';

export interface GraphqlLimits {
  maxDepth: number;
  maxCost: number;
  showCost: boolean;
  persisted: PersistedMode;
  maxTokens: number;
  /** Query texts whose parse and static validation are kept; 0 = off. */
  documentCacheSize: number;
}

/** What the engine needs: everything but how the caller and the body are found (the route's, route.ts). */
export interface GraphqlEngineDeps {
  store: Store;
  registry: PersistedQueryRegistry;
  /** The build-time manifest (generated/graphql/persisted.ts): hash -> text. */
  manifest: Readonly<Record<string, string>>;
  limits: GraphqlLimits;
  /** NODE_ENV=production: introspection is a validation error. */
  production: boolean;
  /** Each request's outcome: `ok`, or the first error's `extensions.code` (one of GRAPHQL_CODES, else `other`). */
  onOutcome?: (outcome: string) => void;
  /** The per-account cost budget (costBudget.ts); absent when GRAPHQL_COST_BUDGET is 0. */
  costBudget?: CostBudget;
  /**
   * Each field error of a partial answer that is not the client's doing (answered
   * INTERNAL_SERVER_ERROR: a resolver failure, a value its type cannot hold), with the
   * request's id: logged as REST logs its 500s, so the id the client holds finds the cause.
   */
  /**
   * Told once per request of its field errors that are not the client's (INTERNAL_SERVER_ERROR),
   * all of them: one request may hold thousands (an alias per field, each failing alike), so
   * the caller logs them as one line, not one each.
   */
  onFieldErrors?: (errs: readonly GraphQLError[], requestId: string | undefined) => void;
}

/** A request whose caller is known and whose body (POST) has been read. */
export interface GraphqlInput {
  /** HEAD is served as GET (the response writer leaves the body out). */
  method: 'GET' | 'POST';
  url: string;
  headers: IncomingHttpHeaders;
  /** The body text (POST), null otherwise. */
  body: string | null;
  account: Account;
  /** The request's id (its log line's), which a field error not of the client's doing is logged with. */
  requestId?: string;
}

/**
 * An operation judged as a request is (persisted-operation step, parse, graphql-js's
 * rules, depth, cost and `first`, then the cost budget), for a transport other than
 * HTTP (graphql-transport-ws): ready to run, or refused with errors carrying
 * `extensions.code`.
 */
export type Admission = { ok: true; document: DocumentNode; op: OperationDefinitionNode } | { ok: false; errors: readonly GraphQLError[] };

/**
 * /graphql without its transport: the route (route.ts) authenticates and reads the
 * body, then hands the request here. Each call reports its outcome.
 */
export interface GraphqlEngine {
  readonly schema: GraphQLSchema;
  /** The engine's executor (graphql-jit for documents that come back, compiled.ts). */
  execute(args: ExecutionArgs): ExecutionResult | Promise<ExecutionResult>;
  /** A WebSocket `subscribe` payload, judged by the same rules as a request (its outcome is the subscription's to report: it may still fail to start). */
  admit(params: RequestParams, account: Account): Promise<Admission>;
  /** Counts one subscribe's outcome, as each request's is counted: `ok` or its first error's code. */
  countOutcome(errors: readonly GraphQLError[] | undefined): void;
  /** The answer to a request whose caller is known. */
  serve(input: GraphqlInput): Promise<Response>;
  /**
   * The answer to a request refused before the engine (401 with its challenge, 413, 400
   * for an unreadable body), in GraphQL's shape; `account` when the caller is known;
   * `charged`: what the cost budget already charged for it (a GET's 412, decided on the
   * answer the query gave), 0 for a refusal before pricing.
   */
  refuse(refusal: Refusal, accept: string | undefined, account: Account | undefined, charged?: number): Promise<Response>;
}

export const GRAPHQL_PATH = '/graphql';
/** The `extensions.code` of a refusal made before the engine (the route's, the pipeline's): REST's problem code where GraphQL has one of the same meaning; BAD_REQUEST for the rest. */
const REFUSAL_CODES: ReadonlyMap<string, GraphqlCode> = new Map<ProblemCode, GraphqlCode>([
  ['UNAUTHORIZED', GRAPHQL_CODES.UNAUTHENTICATED],
  ['SERVICE_UNAVAILABLE', GRAPHQL_CODES.UNAVAILABLE],
  ['PRECONDITION_FAILED', GRAPHQL_CODES.PRECONDITION_FAILED],
  ['METHOD_NOT_ALLOWED', GRAPHQL_CODES.METHOD_NOT_ALLOWED],
  ['PAYLOAD_TOO_LARGE', GRAPHQL_CODES.PAYLOAD_TOO_LARGE],
  ['UNSUPPORTED_MEDIA_TYPE', GRAPHQL_CODES.UNSUPPORTED_MEDIA_TYPE],
]);

const SUBSCRIPTIONS_OVER_WS = 'Subscriptions are served over WebSocket on /graphql (graphql-transport-ws), not over HTTP';

/** What the engine knows of each request beside method, url and body: the caller and its Accept. */
interface RequestContext {
  account: Account;
  accept: string | undefined;
  /** What the cost budget charged this request (set in onSubscribe), for `extensions.cost` on its response. */
  cost?: CostExtension;
  requestId: string | undefined;
}
/** A request as the engine reads it: what the route passed, and what it knows of it. */
interface HttpRequest {
  method: 'GET' | 'POST';
  url: string;
  /** The body text (POST), null otherwise. */
  body: string | null;
  context: RequestContext;
}

const isResponse = (x: RequestParams | ExecutionArgs | Response): x is Response => Array.isArray(x);

/**
 * graphql-http's JSON replacer for an answer with errors: an Error that is not a
 * GraphQLError (which has its own toJSON) is written as its message alone, never its stack.
 */
function errorReplacer(_key: string, value: unknown): unknown {
  return value instanceof Error && !(value instanceof GraphQLError) ? { message: value.message } : value;
}

const GRAPHQL_RESPONSE = 'application/graphql-response+json';
const GRAPHQL_RESPONSE_JSON = `${GRAPHQL_RESPONSE}; charset=utf-8`;
const JSON_UTF8 = 'application/json; charset=utf-8';

/**
 * The response media type (RFC 9110 12.5.1, with the service's one Accept parser,
 * http/rest/negotiate.ts): application/graphql-response+json or application/json, in
 * UTF-8 (no charset means UTF-8), whichever Accept gives the higher q; `q=0` refuses a
 * type; a tie goes to the one listed first, and `application/*` or `*\/*` stand for
 * application/json unless that is refused. Without `q` this is graphql-http's choice (the
 * test holds the two together). None acceptable: 406 (the engine's `answer`); answers
 * given before negotiation (401, 413, an unreadable body) then fall back to
 * application/json.
 */
export function mediaTypeFor(accept: string | undefined): string {
  return acceptedMediaType(accept) ?? JSON_UTF8;
}

/** The negotiated response media type (see mediaTypeFor), undefined when no Accept entry is acceptable (406). */
export function acceptedMediaType(accept: string | undefined): string | undefined {
  // A client sends the same Accept on every request: the last answer is kept (a pure function of it).
  if (accept === memo.accept && memo.known) return memo.type;
  const type = negotiateMediaType(accept);
  memo.accept = accept;
  memo.type = type;
  memo.known = true;
  return type;
}
const memo: { accept: string | undefined; type: string | undefined; known: boolean } = { accept: undefined, type: undefined, known: false };

function negotiateMediaType(accept: string | undefined): string | undefined {
  // No Accept, or only empty list elements: anything is acceptable (the same rule as REST's and the stream's).
  if (accept === undefined || acceptIsEmpty(accept)) return JSON_UTF8;
  // Ranges naming a charset other than UTF-8 match nothing offered here (parseAccept leaves them out).
  const ranges = parseAccept(accept);
  // Each type's q as REST reads it (the most specific range that matches decides).
  const qGr = qualityOf(ranges, GRAPHQL_RESPONSE);
  const qJson = qualityOf(ranges, 'application/json');
  if (qGr === 0 && qJson === 0) return undefined;
  if (qGr !== qJson) return qGr > qJson ? GRAPHQL_RESPONSE_JSON : JSON_UTF8;
  // A tie: the first range sent that admits either decides, as graphql-http's first match does
  // (application/graphql-response+json when it names it; wildcards stand for application/json).
  let first: Range | undefined;
  for (const r of ranges) if (r.q > 0 && (r.type === GRAPHQL_RESPONSE || r.type === 'application/json' || r.type === 'application/*' || r.type === '*/*') && (first === undefined || r.order < first.order)) first = r;
  return first?.type === GRAPHQL_RESPONSE ? GRAPHQL_RESPONSE_JSON : JSON_UTF8;
}

/** graphql-http's answer when no Accept entry is acceptable: 406 naming the two it serves, no body. */
const notAcceptable = (): Response => [null, { status: 406, statusText: 'Not Acceptable', headers: { accept: `${GRAPHQL_RESPONSE_JSON}, ${JSON_UTF8}` } }];

function errorsBody(errors: readonly GraphQLError[], code: GraphqlCode, extensions?: Record<string, unknown>): string {
  return JSON.stringify({ errors: coded(errors, code), ...(extensions ? { extensions } : {}) });
}

function errorResponse(accept: string | undefined, status: number, code: GraphqlCode, message: string, headers: Record<string, string> = {}): Response {
  return [errorsBody([new GraphQLError(message, { extensions: { code } })], code), { status, statusText: '', headers: { 'content-type': mediaTypeFor(accept), ...headers } }];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Query-string JSON parameter, or a 400 naming it. */
function jsonParam(search: Query, name: string): { ok: true; value: unknown } | { ok: false; why: string } {
  const raw = search[name];
  if (raw === undefined || raw === '' || Array.isArray(raw)) return { ok: true, value: undefined }; // a repeated one is refused before
  const parsed = parseClientJson(raw, `'${name}'`);
  return isRefusal(parsed) ? { ok: false, why: parsed.problem.detail ?? parsed.problem.title } : { ok: true, value: parsed.json };
}

/** The GraphQL-over-HTTP parameters of a GET. */
const GET_PARAMS = ['query', 'operationName', 'variables', 'extensions'] as const;

/** Reads GraphQL-over-HTTP parameters; `query` is '' when only a persisted hash is sent. */
function readParams(req: HttpRequest): RequestParams | Response {
  const { accept } = req.context;
  const bad = (message: string) => errorResponse(accept, 400, GRAPHQL_CODES.BAD_REQUEST, message);
  let data: Record<string, unknown>;
  if (req.method === 'GET') {
    const q = req.url.indexOf('?');
    const query = q < 0 ? '' : req.url.slice(q + 1); // everything after the first `?` (a later one is data, RFC 3986 3.4)
    // The service's one query reader: `%FF` (not UTF-8) is refused rather than read as U+FFFD.
    const search = readQuery(query);
    if (isRefusal(search)) return bad(search.problem.detail ?? search.problem.title);
    // Each parameter once: two would be read as the first here and perhaps as the last by a cache or proxy.
    for (const name of GET_PARAMS) if (Array.isArray(search[name])) return bad(`'${name}' may appear once`);
    const variables = jsonParam(search, 'variables');
    const extensions = jsonParam(search, 'extensions');
    if (!variables.ok) return bad(variables.why);
    if (!extensions.ok) return bad(extensions.why);
    data = { query: search.query, operationName: search.operationName, variables: variables.value, extensions: extensions.value };
  } else {
    const raw = req.body; // the text the route read (route.ts), its media type judged there
    // The service's one reader of client JSON: nesting bound, unpaired surrogates, repeated member names.
    const read = typeof raw === 'string' ? parseClientJson(raw) : { json: raw };
    if (isRefusal(read)) return bad(read.problem.detail ?? read.problem.title);
    const parsed = read.json;
    if (Array.isArray(parsed)) return bad('Batched operations are not supported: send one operation per request');
    if (!isObject(parsed)) return bad('The request body must be a JSON object');
    data = parsed;
  }
  const { query, operationName, variables, extensions } = data;
  if (query != null && typeof query !== 'string') return bad("'query' must be a string");
  if (operationName != null && typeof operationName !== 'string') return bad("'operationName' must be a string");
  if (variables != null && !isObject(variables)) return bad("'variables' must be an object");
  if (extensions != null && !isObject(extensions)) return bad("'extensions' must be an object");
  // An empty operationName names no operation: absent, as an empty `variables=` is (no operation can be named '').
  return { query: query ?? '', operationName: operationName || undefined, variables, extensions };
}

export function graphqlEngine(deps: GraphqlEngineDeps): GraphqlEngine {
  const schema = createSchema();
  // What a mutation sent with GET is told: where to send it, or that there is none to send.
  const getMutation = schema.getMutationType() ? 'Only queries may be sent with GET: send mutations with POST' : 'Only queries may be sent with GET (and this schema defines no mutations)';
  const { limits } = deps;
  const manifest = manifestMap(deps.manifest);

  // The rules of the text alone are cached per text; depth, cost and `first` run in one pass per variable set (rules.ts).
  const documents = new DocumentCache(schema, documentRules(limits, deps.production), limits.maxTokens, limits.documentCacheSize);
  const limitRules = variableRules(limits);

  /**
   * The request's variables as the selected operation's definitions coerce them (graphql-js
   * getVariableValues, as execution will): the cost and `first` rules and the cost budget
   * read these, so a value execution would refuse (2147483648 or 1e20 for an Int) is the
   * client's BAD_USER_INPUT, as at execution, not a verdict on a number that never runs.
   * The variables as sent when the operation declares none, or when no operation is
   * selected (`op` null or undefined: answered after the limit rules).
   */
  function coerceVariables(op: OperationDefinitionNode | null | undefined, params: RequestParams): { ok: true; values: RequestParams['variables'] } | { ok: false; errors: readonly GraphQLError[] } {
    if (!op?.variableDefinitions?.length) return { ok: true, values: params.variables };
    const result = getVariableValues(schema, op.variableDefinitions, params.variables ?? {}, { maxErrors: 25 });
    return result.errors ? { ok: false, errors: result.errors } : { ok: true, values: result.coerced };
  }

  const execute = compiledExecutor(schema, { onCompile: (document) => documents.compiled(document) });

  /**
   * One request, GraphQL over HTTP: Accept (406), the parameters, admission, execution,
   * the answer. graphql-http's handler did these steps around the engine's hooks; the
   * engine had taken over each but the Accept check and the call to execute, and the
   * handler still negotiated Accept again, awaited every hook and looked the operation up
   * a second time on each request (about 2 µs of a cached query, measured in BENCHMARKS.md,
   * GraphQL). graphql-http's own audits (serverAudits) still judge this path
   * (test/integration/graphqlAudits.test.ts), and its negotiation is the reference of
   * `mediaTypeFor`'s test.
   */
  async function answer(req: HttpRequest): Promise<Response> {
    if (acceptedMediaType(req.context.accept) === undefined) return notAcceptable();
    const params = readParams(req);
    if (isResponse(params)) return params;
    const args = await admitRequest(req, params);
    if (isResponse(args)) return args;
    return respond(req, await execute(args));
  }

  /**
   * The persisted-operation step, parse and graphql-js's rules (cached per text), the
   * limit rules, the operation checks, then APQ registration and the cost budget: the
   * arguments to execute, or the refusal. Nothing is registered or charged for a request
   * refused here.
   */
  async function admitRequest(req: HttpRequest, params: RequestParams): Promise<ExecutionArgs | Response> {
    const { accept, account } = req.context;
    const resolving = resolveOperation(params, limits.persisted, manifest, deps.registry);
    const resolved = resolving instanceof Promise ? await resolving : resolving; // no hop when the answer is in process
    if (!resolved.ok) {
      // An APQ miss is answered 200 (Apollo's protocol): a cache in between must not keep it, or the client's retry with the text would meet it again (Apollo Server sends the same).
      const noStore = resolved.code === GRAPHQL_CODES.PERSISTED_QUERY_NOT_FOUND ? { 'cache-control': 'private, no-cache, must-revalidate' } : undefined;
      return errorResponse(accept, resolved.status, resolved.code, resolved.message, noStore);
    }
    const prepared = documents.prepare(resolved.text);
    if (!prepared.ok) return [errorsBody([prepared.parseError], GRAPHQL_CODES.PARSE_FAILED), { status: 400, statusText: 'Bad Request', headers: { 'content-type': mediaTypeFor(accept) } }];
    const { document } = prepared;
    const op = getOperationAST(document, params.operationName);
    // GraphQL over HTTP: a mutation is never run for a GET (405 with Allow, as graphql-http answers it, in GraphQL's shape),
    // whatever else is wrong with it: the method is what the client must change first.
    if (op?.operation === OperationTypeNode.MUTATION && req.method === 'GET') return errorResponse(accept, 405, GRAPHQL_CODES.METHOD_NOT_ALLOWED, getMutation, { allow: 'POST' });
    const coerced = prepared.errors.length > 0 ? undefined : coerceVariables(op, params);
    if (coerced && !coerced.ok) return [errorsBody(coerced.errors, GRAPHQL_CODES.BAD_USER_INPUT), { status: 400, statusText: 'Bad Request', headers: { 'content-type': mediaTypeFor(accept) } }];
    const variables = coerced?.values;
    const errors = prepared.errors.length > 0 ? prepared.errors : documents.limitErrors(prepared, variables, op?.name?.value, () => limitRules(variables, op));
    if (errors.length > 0) {
      return [errorsBody(errors, GRAPHQL_CODES.VALIDATION_FAILED), { status: 400, statusText: 'Bad Request', headers: { 'content-type': mediaTypeFor(accept) } }];
    }
    if (!op) {
      return errorResponse(accept, 400, GRAPHQL_CODES.BAD_REQUEST, params.operationName != null ? `No operation named '${params.operationName}'` : 'operationName is required for a document with several operations');
    }
    if (op.operation === OperationTypeNode.SUBSCRIPTION) return errorResponse(accept, 400, GRAPHQL_CODES.BAD_REQUEST, SUBSCRIPTIONS_OVER_WS);
    if (resolved.register) await deps.registry.set(resolved.register, resolved.text);
    if (deps.costBudget) {
      // Charged after validation, before any resolver: a throttled operation runs nothing.
      const charging = deps.costBudget.charge(account.id, schema, document, op, variables);
      const charge = charging instanceof Promise ? await charging : charging;
      req.context.cost = charge.cost;
      if (!charge.admitted) return [charge.body, { status: 429, statusText: 'Too Many Requests', headers: { 'content-type': mediaTypeFor(accept), 'retry-after': String(charge.retryAfterS) } }];
    }
    const contextValue: GraphqlContext = { store: deps.store, account, loaders: createLoaders(deps.store) };
    return { schema, document, operationName: params.operationName, variableValues: params.variables, contextValue };
  }

  /** The answer to an executed operation: data, partial data, a request error (400) or the store's outage (503). */
  function respond(req: HttpRequest, result: ExecutionResult): Response {
    const { cost } = req.context;
    // The store could not be reached: the answer is "retry later" (503, Retry-After, no
    // partial data, nothing of the driver's message), as on every other transport.
    if (result.errors?.some((e) => e.originalError instanceof StoreUnavailableError)) {
      return [
        errorsBody([new GraphQLError('The store is unavailable: retry later', { extensions: { code: GRAPHQL_CODES.UNAVAILABLE } })], GRAPHQL_CODES.UNAVAILABLE, cost && { cost }),
        { status: 503, statusText: 'Service Unavailable', headers: { 'content-type': mediaTypeFor(req.context.accept), 'retry-after': String(STORE_RETRY_AFTER_S) } },
      ];
    }
    // No `data` at all: a request error (variables), a client's 4xx.
    if (!('data' in result) || result.data === undefined) {
      return [errorsBody(result.errors ?? [], GRAPHQL_CODES.BAD_USER_INPUT, cost && { cost }), { status: 400, statusText: 'Bad Request', headers: { 'content-type': mediaTypeFor(req.context.accept) } }];
    }
    const head = { status: 200, statusText: 'OK', headers: { 'content-type': mediaTypeFor(req.context.accept) } };
    if (result.errors !== undefined && result.errors.length > 0) {
      // Partial data (200): each error with a code, as every error of /graphql has (the
      // resolver's own, else INTERNAL_SERVER_ERROR); values written as graphql-http writes them (errorReplacer).
      const raw = result.errors;
      const errors = coded(raw, GRAPHQL_CODES.INTERNAL_SERVER_ERROR);
      const internal = deps.onFieldErrors && raw.filter((_, i) => errors[i].extensions.code === GRAPHQL_CODES.INTERNAL_SERVER_ERROR);
      if (internal && internal.length > 0) deps.onFieldErrors?.(internal, req.context.requestId);
      return [JSON.stringify({ ...result, errors, ...(cost ? { extensions: { ...result.extensions, cost } } : {}) }, errorReplacer), head];
    }
    // Data and no errors, the common answer: a plain JSON.stringify (a replacer, needed
    // only for Error values in `errors`, takes JSON.stringify off its fast path: about
    // 1.5 µs of a 45 µs cached query). `extensions.cost`, when charged and the
    // execution added no extensions of its own, is appended as text
    // (costBudget.extensionsJson) rather than stringified as a nested object.
    let text: string;
    if (!cost || !deps.costBudget) text = JSON.stringify(result);
    else if (result.extensions === undefined) text = `{"data":${JSON.stringify(result.data)},"extensions":${deps.costBudget.extensionsJson(cost)}}`;
    else text = JSON.stringify({ ...result, extensions: { ...result.extensions, cost } });
    return [text, head];
  }

  /**
   * With the budget on, a response refused before pricing (bad parameters or body, APQ
   * miss, parse or validation error, unknown operation name) still carries
   * `extensions.cost`: `requestedQueryCost` 0 (nothing was charged) and the account's
   * bucket as it stands, read without charging. Error paths only: a priced response
   * already has it (onSubscribe, onOperation). A bodiless answer (406) has none; an answer with
   * an `errors` body (the 405 of a mutation over GET included) has it.
   */
  async function withUnpricedCost(response: Response, account: Account, charged = 0): Promise<Response> {
    const [body, init] = response;
    if (!deps.costBudget || typeof body !== 'string') return response;
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return response;
    }
    if (!isObject(json)) return response;
    const cost = { ...(await deps.costBudget.status(account.id)), requestedQueryCost: charged };
    return [JSON.stringify({ ...json, extensions: { ...(isObject(json.extensions) ? json.extensions : {}), cost } }), init];
  }

  const report = (response: Response): Response => {
    deps.onOutcome?.(outcomeOf(response[1].status, response[0]));
    return response;
  };

  const refused = (code: GraphqlCode, message: string): Admission => ({ ok: false, errors: [new GraphQLError(message, { extensions: { code } })] });

  /** `onSubscribe`'s steps for a WebSocket `subscribe` (same rules, same order), answered as errors rather than HTTP responses. */
  async function admit(params: RequestParams, account: Account): Promise<Admission> {
    const resolved = await resolveOperation(params, limits.persisted, manifest, deps.registry);
    if (!resolved.ok) return refused(resolved.code, resolved.message);
    const prepared = documents.prepare(resolved.text);
    if (!prepared.ok)
      return { ok: false, errors: [new GraphQLError(prepared.parseError.message, { source: prepared.parseError.source, positions: prepared.parseError.positions, extensions: { code: GRAPHQL_CODES.PARSE_FAILED } })] };
    const { document } = prepared;
    const op = getOperationAST(document, params.operationName);
    const coerced = prepared.errors.length > 0 ? undefined : coerceVariables(op, params);
    if (coerced && !coerced.ok) return { ok: false, errors: coerced.errors.map((e) => new GraphQLError(e.message, { nodes: e.nodes, extensions: { ...e.extensions, code: GRAPHQL_CODES.BAD_USER_INPUT } })) };
    const variables = coerced?.values;
    const errors = prepared.errors.length > 0 ? prepared.errors : documents.limitErrors(prepared, variables, op?.name?.value, () => limitRules(variables, op));
    if (errors.length > 0)
      return { ok: false, errors: errors.map((e) => (e.extensions?.code ? e : new GraphQLError(e.message, { nodes: e.nodes, extensions: { ...e.extensions, code: GRAPHQL_CODES.VALIDATION_FAILED } }))) };
    if (!op) return refused(GRAPHQL_CODES.BAD_REQUEST, params.operationName != null ? `No operation named '${params.operationName}'` : 'operationName is required for a document with several operations');
    if (op.operation !== OperationTypeNode.SUBSCRIPTION) return refused(GRAPHQL_CODES.BAD_REQUEST, 'Only subscriptions are served over WebSocket: send queries and mutations to POST /graphql');
    if (resolved.register) await deps.registry.set(resolved.register, resolved.text);
    if (deps.costBudget) {
      // Charged once per subscription, after validation and before it starts (its cost is one event's price).
      const charge = await deps.costBudget.charge(account.id, schema, document, op, variables);
      // The same error as over HTTP: its extensions say the cost, the points missing and when to retry.
      if (!charge.admitted) return { ok: false, errors: [charge.error] };
    }
    return { ok: true, document, op };
  }

  return {
    schema,
    execute,
    admit,
    countOutcome(errors) {
      deps.onOutcome?.(errors === undefined || errors.length === 0 ? 'ok' : outcomeOf(400, JSON.stringify({ errors })));
    },
    async serve({ method, url, headers, body, account, requestId }) {
      // `cost` present from the start (set when charged): one object shape for every request.
      const context: RequestContext = { account, accept: headers.accept || undefined, cost: undefined, requestId };
      const response = await answer({ method, url, body, context });
      if (!deps.costBudget) return report(response);
      return report(context.cost === undefined ? await withUnpricedCost(response, account) : response);
    },
    async refuse({ problem, headers }, accept, account, charged = 0) {
      const code = REFUSAL_CODES.get(problem.code) ?? GRAPHQL_CODES.BAD_REQUEST;
      const refused = errorResponse(accept, problem.status, code, problem.detail ?? problem.title, headers);
      // No account (401): no bucket to report.
      return report(account ? await withUnpricedCost(refused, account, charged) : refused);
    },
  };
}
