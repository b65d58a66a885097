/** The GraphQL client's errors, shared by queries (graphql.ts) and subscriptions (subscriptions.ts). */
/**
 * The `extensions.code` values orderline sends (validation violations, persisted
 * operations); open-ended, as a newer server may add codes.
 */
export type GraphqlErrorCode =
  | 'GRAPHQL_VALIDATION_FAILED'
  | 'GRAPHQL_PARSE_FAILED'
  | 'BAD_USER_INPUT'
  | 'PERSISTED_QUERY_NOT_FOUND'
  | 'PERSISTED_QUERY_NOT_ALLOWED'
  | 'PERSISTED_QUERY_HASH_MISMATCH'
  | 'BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'THROTTLED'
  | (string & {});

export interface GraphqlErrorJson {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: GraphqlErrorCode } & Record<string, unknown>;
}

/** A GraphQL response with errors and no data: `code` is the first error's `extensions.code`. */
export class GraphqlRequestError extends Error {
  override readonly name = 'GraphqlRequestError';
  constructor(
    readonly status: number,
    readonly errors: GraphqlErrorJson[],
  ) {
    super(errors[0]?.message ?? `GraphQL request failed with HTTP ${status}`);
  }
  get code(): GraphqlErrorCode | undefined {
    return this.errors[0]?.extensions?.code;
  }
}
