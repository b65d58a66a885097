import { GraphQLError, type ASTNode } from 'graphql';
import { StoreUnavailableError } from '../store';

/**
 * The `extensions.code` values a client can get from /graphql (validation violations,
 * persisted operations). Stable: clients branch on them, not on messages.
 */
export const GRAPHQL_CODES = {
  /** The document broke a rule of the validation pass (depth, cost, `first`, GraphQL's own rules). */
  VALIDATION_FAILED: 'GRAPHQL_VALIDATION_FAILED',
  /** The text is not a GraphQL document, or has more tokens than the parser allows. */
  PARSE_FAILED: 'GRAPHQL_PARSE_FAILED',
  /** Variables do not fit the operation's variable types. */
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  /** APQ: the hash is unknown; Apollo clients retry with the text (HTTP 200 on purpose). */
  PERSISTED_QUERY_NOT_FOUND: 'PERSISTED_QUERY_NOT_FOUND',
  /** Allowlist mode: the operation is not in the build-time manifest. */
  PERSISTED_QUERY_NOT_ALLOWED: 'PERSISTED_QUERY_NOT_ALLOWED',
  /** APQ: the text's SHA-256 is not the hash sent with it. */
  PERSISTED_QUERY_HASH_MISMATCH: 'PERSISTED_QUERY_HASH_MISMATCH',
  /** The request is not a GraphQL-over-HTTP request we can read (shape, JSON, version). */
  BAD_REQUEST: 'BAD_REQUEST',
  /**
   * HTTP-level refusals, named as REST's problem codes name them, so a client that serves
   * both interfaces branches on one name: 405 (a mutation over GET, another method), 413 (a
   * body over BODY_LIMIT_BYTES), 415 (a POST body that is not JSON).
   */
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  /** A subscription's order is missing, or another account's (it looks missing). */
  NOT_FOUND: 'NOT_FOUND',
  /** A subscription's stream could not be loaded (store failure): subscribe again later. */
  UNAVAILABLE: 'UNAVAILABLE',
  /** The connection already holds as many subscriptions as one may (MAX_SUBSCRIPTIONS_PER_CONNECTION). */
  TOO_MANY_SUBSCRIPTIONS: 'TOO_MANY_SUBSCRIPTIONS',
  /** A GET's If-Match names no tag of the answer it would get (HTTP 412). */
  PRECONDITION_FAILED: 'PRECONDITION_FAILED',
  /** The account's cost budget cannot pay for this operation now (HTTP 429, Retry-After). */
  THROTTLED: 'THROTTLED',
  /** A field of a partial answer could not be resolved, not by the client's doing (a value its type cannot hold, a resolver failure): `data` holds the rest. */
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
} as const;
export type GraphqlCode = (typeof GRAPHQL_CODES)[keyof typeof GRAPHQL_CODES];

/** A rule violation, reported through `context.reportError` (rules never throw: a throw would be a 500). */
export function validationError(message: string, nodes?: ASTNode | readonly ASTNode[], extra: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { nodes, extensions: { code: GRAPHQL_CODES.VALIDATION_FAILED, ...extra } });
}

/**
 * A field error graphql-js raises itself while reading a field's arguments (`getArgumentValues`):
 * `Argument "if" of non-null type "Boolean!" must not be null.` when the client sent `null`
 * for a variable with a default that stands where a value is required, and its like. The
 * arguments are the client's (document and variables), so the error is BAD_USER_INPUT,
 * not the server's INTERNAL_SERVER_ERROR. Recognized by graphql-js 16's wording: it carries
 * no code and no error of a resolver to tell it by.
 */
function isArgumentError(e: GraphQLError): boolean {
  // Raised by graphql-js, then located at the field: the original is graphql-js's own GraphQLError, not a resolver's Error.
  const raised = e.originalError === undefined || (e.originalError instanceof GraphQLError && e.originalError.originalError === undefined);
  return raised && e.message.startsWith('Argument "');
}

/**
 * The `extensions.code` of an error: its own; UNAVAILABLE for the store's outage (retry
 * later); BAD_USER_INPUT for an argument the client made null (isArgumentError); else `code`.
 */
export function codeOf(e: GraphQLError, code: GraphqlCode): string {
  // `?.`: graphql-jit's errors have no `extensions` object when there is nothing in it.
  const own = e.extensions?.code;
  if (typeof own === 'string') return own;
  if (e.originalError instanceof StoreUnavailableError) return GRAPHQL_CODES.UNAVAILABLE;
  return isArgumentError(e) ? GRAPHQL_CODES.BAD_USER_INPUT : code;
}

/** Errors as the service writes them on every transport (/graphql over HTTP, subscription events): each with its `codeOf`. */
export function coded(errors: readonly GraphQLError[], code: GraphqlCode) {
  return errors.map((e) => ({ ...e.toJSON(), extensions: { ...e.extensions, code: codeOf(e, code) } }));
}
