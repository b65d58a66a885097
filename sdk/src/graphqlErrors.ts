/**
 * The GraphQL client's error, in a module of its own so queries and subscriptions
 * share it without importing each other.
 */
import { OrderlineError, type GraphqlErrorJson } from './errors.js';

/**
 * A GraphQL response with errors: an OrderlineError (source `graphql`) whose `code` is
 * the first error's `extensions.code`, `errors` all of them, `data` any partial data.
 * Kept as its own class so `instanceof GraphqlRequestError` goes on working.
 */
export class GraphqlRequestError extends OrderlineError {
  override readonly name: string = 'GraphqlRequestError';
  constructor(status: number, errors: GraphqlErrorJson[], init: { requestId?: string | undefined; data?: unknown; retryAfterMs?: number | undefined } = {}) {
    super(status, undefined, { ...init, source: 'graphql', errors, message: errors[0]?.message ?? `GraphQL request failed with HTTP ${status}` });
  }
}
