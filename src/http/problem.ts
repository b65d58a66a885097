/**
 * RFC 9457 problem details. Inside the service a refused request is a value (`Refusal`:
 * the problem and its response fields); it becomes `application/problem+json` bytes once,
 * where a transport writes (http/respond.ts; GraphQL and WebSocket in their own shapes).
 * `refusalOf` is the one funnel for exceptions: a client's refusal, or undefined (a 500).
 */
import { STATUS_CODES } from 'node:http';
import { StoreInputError, StoreUnavailableError } from '../store';

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

export interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  detail?: string;
  errors?: { pointer?: string; rule?: string; message: string }[];
  [extension: string]: unknown;
}

/** Stable codes and their titles (the `code` member is the contract clients key on). */
export const PROBLEMS = {
  BAD_REQUEST: [400, 'Bad request'],
  VALIDATION_FAILED: [400, 'Request validation failed'],
  BAD_CURSOR: [400, 'Invalid page cursor'],
  UNAUTHORIZED: [401, 'Missing or invalid bearer token'],
  FORBIDDEN: [403, 'Forbidden'],
  NOT_FOUND: [404, 'Not found'],
  METHOD_NOT_ALLOWED: [405, 'Method not allowed'],
  NOT_ACCEPTABLE: [406, 'Not acceptable'],
  REQUEST_TIMEOUT: [408, 'Request timeout'],
  CONFLICT: [409, 'Conflict'],
  IDEMPOTENCY_KEY_IN_USE: [409, 'Idempotency key in use'],
  PRECONDITION_FAILED: [412, 'Precondition failed'],
  PAYLOAD_TOO_LARGE: [413, 'Payload too large'],
  URI_TOO_LONG: [414, 'URI too long'],
  UNSUPPORTED_MEDIA_TYPE: [415, 'Unsupported media type'],
  EXPECTATION_FAILED: [417, 'Expectation failed'],
  IDEMPOTENCY_KEY_REUSED: [422, 'Idempotency key reused'],
  UNPROCESSABLE_CONTENT: [422, 'Unprocessable content'],
  PRECONDITION_REQUIRED: [428, 'Precondition required'],
  RATE_LIMITED: [429, 'Too many requests'],
  HEADER_FIELDS_TOO_LARGE: [431, 'Request header fields too large'],
  SERVICE_UNAVAILABLE: [503, 'Service unavailable'],
  INTERNAL: [500, 'Internal server error'],
  NOT_IMPLEMENTED: [501, 'Not implemented'],
  HTTP_VERSION_NOT_SUPPORTED: [505, 'HTTP version not supported'],
  /** A client error with no code of its own (a custom Koa route's `ctx.throw(410)`): the problem's `status` and `title` are the HTTP status's. */
  CLIENT_ERROR: [400, 'Client error'],
} as const satisfies Record<string, readonly [number, string]>;

export type ProblemCode = keyof typeof PROBLEMS;

export function problem(code: ProblemCode, detail?: string, extra: Partial<Problem> = {}): Problem {
  const [status, title] = PROBLEMS[code];
  return {
    type: `https://orderline.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`,
    title,
    status,
    code,
    ...(detail ? { detail } : {}),
    ...extra,
  };
}

/**
 * A request refused, as a value: the problem and the fields its response carries (Allow,
 * WWW-Authenticate, Retry-After, RateLimit). Functions on the request path return one;
 * it becomes bytes once, where the transport writes (respond.ts `sendProblem` for HTTP,
 * the GraphQL engine's `refuse` for /graphql).
 */
export interface Refusal {
  readonly refused: true;
  readonly problem: Problem;
  readonly headers?: Readonly<Record<string, string>>;
}

export const refusal = (code: ProblemCode, detail?: string, headers?: Record<string, string>, extra?: Partial<Problem>): Refusal => ({
  refused: true,
  problem: problem(code, detail, extra),
  headers,
});

/** Tells a refusal from the value a step returns when it lets the request on. */
export const isRefusal = (v: object): v is Refusal => 'refused' in v && v.refused === true;

/** Statuses raised as exceptions by libraries (Koa's `ctx.throw`, http-errors) or set by a custom route, mapped to our codes. */
const FROM_STATUS: Record<number, ProblemCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  412: 'PRECONDITION_FAILED',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  417: 'EXPECTATION_FAILED',
  422: 'UNPROCESSABLE_CONTENT',
  428: 'PRECONDITION_REQUIRED',
  429: 'RATE_LIMITED',
  431: 'HEADER_FIELDS_TOO_LARGE',
  501: 'NOT_IMPLEMENTED',
  505: 'HTTP_VERSION_NOT_SUPPORTED',
  503: 'SERVICE_UNAVAILABLE',
};

/**
 * The refusal a status stands for: its code (FROM_STATUS), else, for another 4xx, CLIENT_ERROR
 * with that status and its HTTP title; undefined for a 5xx other than 501, 503 and 505 (a server
 * error: the caller logs it and answers 500 without internals).
 */
export function refusalForStatus(status: number, detail?: string, headers?: Record<string, string>): Refusal | undefined {
  const code = FROM_STATUS[status];
  if (code) return refusal(code, detail, headers);
  if (status >= 400 && status < 500) return refusal('CLIENT_ERROR', detail, headers, { status, title: STATUS_CODES[status] ?? 'Client error' });
  return undefined;
}

/**
 * The 405 of every path, the contract's, a transport's or a Koa route's: `allow` lists what the
 * path serves (none: no `Allow`, a Koa route that set 405 alone). A HEAD is refused where its GET is and has that GET's header fields, its
 * `Content-Length` included (RFC 9110 9.3.2), so its detail names GET.
 */
export function methodNotAllowed(method: string, allow: string | undefined): Refusal {
  return refusal('METHOD_NOT_ALLOWED', `${method === 'HEAD' ? 'GET' : method} is not allowed here`, allow ? { Allow: allow } : undefined);
}

/**
 * Seconds a client is told to wait when the store cannot be reached: about what a
 * PostgreSQL restart or failover takes, and short enough that nobody waits long after.
 */
export const STORE_RETRY_AFTER_S = 5;

/**
 * The error funnel: the refusal an exception stands for when it is the client's doing
 * (or a store that cannot serve it now: 503, retry later), undefined when it is not
 * (the caller logs it and answers 500 without internals).
 */
export function refusalOf(err: unknown): Refusal | undefined {
  // What the client sent cannot be stored (PostgreSQL text holds no U+0000): nothing was written.
  if (err instanceof StoreInputError) return refusal('BAD_REQUEST', err.message);
  // The store cannot serve it now (unreachable, shutting down, a file locked past its timeout): nothing was written, retrying later will do.
  if (err instanceof StoreUnavailableError) return refusal('SERVICE_UNAVAILABLE', 'The store is unavailable: retry later', { 'Retry-After': String(STORE_RETRY_AFTER_S) });
  if (typeof err !== 'object' || err === null || !('status' in err) || typeof err.status !== 'number') return undefined;
  const exposed = 'expose' in err && err.expose === true && 'message' in err && typeof err.message === 'string' ? err.message : undefined;
  const headers = 'headers' in err && typeof err.headers === 'object' && err.headers !== null ? Object.fromEntries(Object.entries(err.headers).map(([k, v]) => [k, String(v)])) : undefined;
  return refusalForStatus(err.status, exposed, headers);
}
