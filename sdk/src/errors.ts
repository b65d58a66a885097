/**
 * One error type for every part of the SDK: a REST call, a GraphQL operation and a
 * stream all fail with an `OrderlineError` carrying the HTTP status, the code the server
 * sent (a union of the contract's codes, open to codes added later), the request's id
 * and the body (`problem` for REST, `errors` for GraphQL).
 *
 * `code` is the code exactly as the server sent it: the server's codes are a released
 * contract and stay as they are. The transports name "no or bad credentials"
 * differently (REST `UNAUTHORIZED`, GraphQL `UNAUTHENTICATED`); both answer HTTP 401, so
 * `status` is the field to branch on across transports (`err.status === 401`), and
 * `code` the one to branch on for a specific reason.
 */
import type { components, ProblemCode } from './generated/openapi.js';
import type { ErrorMessageCode } from './generated/messages.js';

export type { ProblemCode };
/** An RFC 9457 problem as the contract defines it, `code` typed with the codes it lists. */
export interface Problem extends Omit<components['schemas']['Problem'], 'code'> {
  code: ProblemCode;
}

/**
 * The `extensions.code` values orderline's /graphql sends (validation, persisted
 * operations, credentials, the cost budget); open-ended, as a newer server may add codes.
 */
export type GraphqlErrorCode =
  | 'GRAPHQL_VALIDATION_FAILED'
  | 'GRAPHQL_PARSE_FAILED'
  | 'BAD_USER_INPUT'
  | 'PERSISTED_QUERY_NOT_FOUND'
  | 'PERSISTED_QUERY_NOT_ALLOWED'
  | 'PERSISTED_QUERY_HASH_MISMATCH'
  | 'BAD_REQUEST'
  | 'METHOD_NOT_ALLOWED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNAUTHENTICATED'
  | 'THROTTLED'
  | 'PRECONDITION_FAILED'
  | 'NOT_FOUND'
  | 'UNAVAILABLE'
  | 'TOO_MANY_SUBSCRIPTIONS'
  | 'INTERNAL_SERVER_ERROR'
  | (string & {});

/** The `code` of a WebSocket `error` message (the service's `/asyncapi.yaml`); open-ended, as a newer server may add codes. */
export type RealtimeErrorCode = ErrorMessageCode;

/**
 * Failures the SDK itself names, with status 0 (no HTTP answer):
 * - `NETWORK_ERROR`: no answer (connection refused or reset, DNS, CORS) after the retries;
 * - `TIMEOUT`: the call's `timeoutMs` passed;
 * - `INSECURE_CONTEXT`: the platform lacks what the call needs (Web Crypto's `subtle`
 *   exists only on https and localhost pages);
 * - `UNSUPPORTED_PLATFORM`: no WebSocket implementation (Node 20: pass the `ws` package);
 * - `BAD_RESPONSE`: an answer the contract does not describe (no ETag, no JSON);
 * - `CONFLICT_RETRIES_EXHAUSTED`: `updateOrder` met a 412 on every attempt.
 */
export type ClientErrorCode = 'NETWORK_ERROR' | 'TIMEOUT' | 'INSECURE_CONTEXT' | 'UNSUPPORTED_PLATFORM' | 'BAD_RESPONSE' | 'CONFLICT_RETRIES_EXHAUSTED';

export type OrderlineErrorCode = ProblemCode | GraphqlErrorCode | RealtimeErrorCode | ClientErrorCode;

export interface GraphqlErrorJson {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: GraphqlErrorCode } & Record<string, unknown>;
}

export interface OrderlineErrorInit {
  /** Which part failed: `rest`, `graphql`, `realtime`, or `client` (the SDK, before any answer). */
  source?: 'rest' | 'graphql' | 'realtime' | 'client';
  code?: OrderlineErrorCode | undefined;
  requestId?: string | undefined;
  errors?: GraphqlErrorJson[] | undefined;
  /** GraphQL: the partial `data` that came with the errors. */
  data?: unknown;
  retryAfterMs?: number | undefined;
  message?: string | undefined;
  cause?: unknown;
}

export class OrderlineError extends Error {
  override readonly name: string = 'OrderlineError';
  /** The HTTP status of the answer; 0 when there was none (network error, timeout, insecure context). */
  readonly status: number;
  /** The code as the server sent it (REST `problem.code`, GraphQL `extensions.code`, WebSocket `code`), or the SDK's own. */
  readonly code: OrderlineErrorCode | undefined;
  readonly source: NonNullable<OrderlineErrorInit['source']>;
  /** The response's `X-Request-Id`: quote it when reporting a problem (the server logs it). */
  readonly requestId: string | undefined;
  /** REST: the RFC 9457 problem body as sent. */
  readonly problem: Partial<Problem> | undefined;
  /** GraphQL: every error of the response (none is dropped). */
  readonly errors: GraphqlErrorJson[];
  /** GraphQL: the partial data that came with the errors, if any. */
  readonly data: unknown;
  /** From `Retry-After` (429, 503) or the GraphQL cost budget: when to try again. */
  readonly retryAfterMs: number | undefined;

  constructor(status: number, problem?: Partial<Problem>, init: OrderlineErrorInit = {}) {
    const code = init.code ?? problem?.code ?? init.errors?.[0]?.extensions?.code;
    const what = init.message ?? problem?.detail ?? problem?.title ?? init.errors?.[0]?.message ?? 'error';
    super(status > 0 ? `HTTP ${status}${code ? ` ${code}` : ''}: ${what}` : `${code ?? 'error'}: ${what}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = status;
    this.problem = problem;
    this.code = code;
    this.source = init.source ?? (init.errors ? 'graphql' : 'rest');
    this.requestId = init.requestId;
    this.errors = init.errors ?? [];
    this.data = init.data;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** The longest Retry-After honoured (a misconfigured proxy must not park a client for days). */
export const MAX_RETRY_AFTER_S = 3600;

/**
 * A refusal's `Retry-After` in seconds (delta-seconds or an HTTP-date, RFC 9110 10.2.3),
 * or undefined when absent or unreadable. Anything else (`1.5`, which `Date.parse`
 * would read as a date in 2001) is unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value == null || value.trim() === '') return undefined;
  const v = value.trim();
  const s = /^\d+$/.test(v) ? Number(v) : /^[A-Za-z]{3}/.test(v) ? (Date.parse(v) - now) / 1000 : NaN;
  return Number.isFinite(s) ? Math.min(MAX_RETRY_AFTER_S, Math.max(0, s)) : undefined;
}

/** `Retry-After` as milliseconds (parseRetryAfter: the one reading of it on every transport). */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  const s = parseRetryAfter(value, now);
  return s === undefined ? undefined : s * 1000;
}

/**
 * The OrderlineError for a REST (or SSE) answer with an error status, reading the problem
 * body when there is one; for a success, BAD_RESPONSE (its body is not what the contract says).
 */
export async function errorFromResponse(response: Response, source: OrderlineErrorInit['source'] = 'rest'): Promise<OrderlineError> {
  let problem: Partial<Problem> | undefined;
  try {
    const body: unknown = JSON.parse(await response.clone().text());
    if (body && typeof body === 'object') problem = body;
  } catch {
    // no JSON body (e.g. a proxy's HTML page): status and headers still tell what happened
  }
  return new OrderlineError(response.status, problem, {
    source,
    code: response.ok ? 'BAD_RESPONSE' : undefined,
    requestId: response.headers.get('x-request-id') ?? undefined,
    retryAfterMs: retryAfterMs(response.headers.get('retry-after')),
  });
}
