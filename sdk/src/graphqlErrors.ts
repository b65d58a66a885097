/**
 * The GraphQL client's error, in a module of its own so queries and subscriptions
 * share it without importing each other.
 */
import { OrderlineError, type GraphqlErrorJson, type OrderlineErrorCode } from './errors.js';

/**
 * A GraphQL response with errors: an OrderlineError (source `graphql`) whose `code` is
 * the first error's `extensions.code`, `errors` all of them, `data` any partial data.
 * Kept as its own class so `instanceof GraphqlRequestError` goes on working.
 */
export class GraphqlRequestError extends OrderlineError {
  override readonly name: string = 'GraphqlRequestError';
  constructor(status: number, errors: GraphqlErrorJson[], init: { requestId?: string | undefined; data?: unknown; retryAfterMs?: number | undefined; code?: OrderlineErrorCode } = {}) {
    super(status, undefined, { ...init, source: 'graphql', errors, message: errors[0]?.message ?? `GraphQL request failed with HTTP ${status}` });
  }
}

/**
 * The status /graphql over HTTP answers an error of each code with, for the errors that come
 * without one: a subscription's `error` message over WebSocket. So `err.status` means the
 * same on both transports (404 for a missing order, as `streamOrder` has it; 400 for a
 * document the server refuses). A code not listed: 400, a request error.
 */
const HTTP_STATUS_OF_CODE: Readonly<Record<string, number>> = {
  UNAUTHENTICATED: 401,
  NOT_FOUND: 404,
  THROTTLED: 429,
  INTERNAL_SERVER_ERROR: 500,
  UNAVAILABLE: 503,
  PERSISTED_QUERY_NOT_FOUND: 200,
};

/** A GraphqlRequestError for `errors` that came without an HTTP status (see HTTP_STATUS_OF_CODE). */
export function requestErrorOverWebSocket(errors: GraphqlErrorJson[]): GraphqlRequestError {
  const code = errors[0]?.extensions?.code;
  return new GraphqlRequestError((typeof code === 'string' ? HTTP_STATUS_OF_CODE[code] : undefined) ?? 400, errors);
}
