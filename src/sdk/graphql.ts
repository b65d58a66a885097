/**
 * The typed GraphQL client: the operations of contracts/operations/ by name, typed by
 * codegen, sent hash first (APQ, Apollo's protocol). Only when the server answers
 * PERSISTED_QUERY_NOT_FOUND is the exact text sent, once, with its hash, so the next
 * call is hash-only again; against an allowlist server the hash is all it ever sends.
 * The text and hash are the generated manifest's, the ones the server's allowlist holds.
 */
import { persistedOperations, type OperationTypes } from '../../generated/graphql/persisted';

export type OperationName = keyof OperationTypes;

interface GraphqlErrorJson {
  message: string;
  extensions?: { code?: string } & Record<string, unknown>;
}

/** A GraphQL response with errors (or no data): `code` is the first error's extensions.code. */
export class GraphqlRequestError extends Error {
  constructor(
    readonly status: number,
    readonly errors: GraphqlErrorJson[],
  ) {
    super(errors[0]?.message ?? `GraphQL request failed with HTTP ${status}`);
  }
  get code(): string | undefined {
    return this.errors[0]?.extensions?.code;
  }
}

export interface GraphqlClientOptions {
  baseUrl: string;
  token?: string;
  fetch?: typeof fetch;
  /** GET for the hash-only request (cacheable by HTTP caches); the retry with text is always a POST. */
  useGetForHashes?: boolean;
}

export interface GraphqlClient {
  query<N extends OperationName>(name: N, variables: OperationTypes[N]['variables']): Promise<OperationTypes[N]['result']>;
}

export function createGraphqlClient(options: GraphqlClientOptions): GraphqlClient {
  const doFetch = options.fetch ?? fetch;
  const url = `${options.baseUrl.replace(/\/$/, '')}/graphql`;
  const headers: Record<string, string> = { accept: 'application/graphql-response+json, application/json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;

  async function send(body: Record<string, unknown>, get: boolean): Promise<{ status: number; json: { data?: unknown; errors?: GraphqlErrorJson[] } }> {
    const res = get
      ? await doFetch(`${url}?${new URLSearchParams(Object.entries(body).filter(([, v]) => v !== undefined).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]))}`, { headers })
      : await doFetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = (await res.json().catch(() => ({ errors: [{ message: `HTTP ${res.status} without a GraphQL body` }] }))) as { data?: unknown; errors?: GraphqlErrorJson[] };
    return { status: res.status, json };
  }

  return {
    async query(name, variables) {
      const op = persistedOperations[name];
      const base = { operationName: name, variables, extensions: { persistedQuery: { version: 1, sha256Hash: op.hash } } };
      let { status, json } = await send(base, options.useGetForHashes ?? false);
      if (json.errors?.[0]?.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND') {
        ({ status, json } = await send({ ...base, query: op.text }, false));
      }
      if (json.data === undefined || json.data === null || (json.errors && json.errors.length > 0 && status >= 400)) {
        throw new GraphqlRequestError(status, json.errors ?? []);
      }
      return json.data as OperationTypes[typeof name]['result'];
    },
  };
}
