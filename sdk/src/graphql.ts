/**
 * `@orderline/sdk/graphql`: the typed GraphQL client.
 *
 * - `query(name, variables)`: the operations of contracts/operations/ by name, typed by
 *   codegen; their text and hash are the generated manifest's, the ones the server's
 *   allowlist holds.
 * - `execute(document, variables)`: any `TypedDocumentNode` a client team generates for
 *   its own queries (graphql-codegen, gql.tada...). Its text is graphql-js's `print` of
 *   the document, the same printer codegen runs over contracts/operations/, and its hash
 *   the plain hex SHA-256 of that exact UTF-8 text, as the server and the allowlist
 *   compute it (no `sha256:` prefix: one hash serves APQ and the allowlist). So a client document equal to a
 *   contract operation has the contract's hash, and registering a partner's document in
 *   the allowlist means adding the same printed text.
 *
 * Both are sent hash first (APQ, Apollo's protocol). Only when the server answers
 * PERSISTED_QUERY_NOT_FOUND is the text sent, once, with its hash, so the next call is
 * hash-only again; against an allowlist server the hash is all it ever sends.
 */
import { Kind, print, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { persistedOperations, type OperationTypes } from './generated/persisted.js';
import { GraphqlRequestError, type GraphqlErrorJson } from './graphqlErrors.js';
import { subscribeOperation, type GraphqlSubscription, type GraphqlWebSocketCtor, type SubscriptionHandlers, type SubscriptionName } from './subscriptions.js';
import type { Backoff } from './realtime.js';

export type { TypedDocumentNode, OperationTypes };
export type OperationName = keyof OperationTypes;

export { GraphqlRequestError, type GraphqlErrorCode, type GraphqlErrorJson } from './graphqlErrors.js';
export { type GraphqlSubscription, type GraphqlWebSocketCtor, type SubscriptionHandlers, type SubscriptionName } from './subscriptions.js';

/** The exact text sent for a document: graphql-js's `print`, as codegen prints contracts/operations/. */
export function printDocument(document: DocumentNode): string {
  return print(document);
}

/** Plain hex SHA-256 of the UTF-8 text (Web Crypto: browsers and Node 20+), the server's hash. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

export interface GraphqlClientOptions {
  baseUrl: string;
  token?: string | undefined;
  fetch?: typeof fetch | undefined;
  /** GET for the hash-only request (cacheable by HTTP caches); the retry with text is always a POST. */
  useGetForHashes?: boolean | undefined;
  /** Subscriptions: a WebSocket constructor (the `ws` package in Node 20; default the platform's). */
  WebSocket?: GraphqlWebSocketCtor | undefined;
  /** Subscriptions: reconnect backoff (default base 500 ms, cap 30 s) and its random source. */
  backoff?: Partial<Backoff> | undefined;
  random?: (() => number) | undefined;
}

export interface GraphqlClient {
  /** A contract operation by name (contracts/operations/). */
  query<N extends OperationName>(name: N, variables: OperationTypes[N]['variables']): Promise<OperationTypes[N]['result']>;
  /** Any typed document, e.g. one the client team generated with graphql-codegen. */
  execute<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, variables: V): Promise<R>;
  /**
   * A contract subscription by name over WebSocket (subscriptions.ts): resumes by itself
   * after a drop with `since` = the last seq delivered, with jittered backoff. Needs a token.
   */
  subscribe<N extends SubscriptionName>(name: N, variables: Omit<OperationTypes[N]['variables'], 'since'> & { since?: number }, handlers: SubscriptionHandlers<OperationTypes[N]['result']>): GraphqlSubscription;
}

interface Prepared {
  name: string | undefined;
  text: string;
  hash: string;
}

export function createGraphqlClient(options: GraphqlClientOptions): GraphqlClient {
  const doFetch = options.fetch ?? fetch;
  const url = `${options.baseUrl.replace(/\/$/, '')}/graphql`;
  const headers: Record<string, string> = { accept: 'application/graphql-response+json, application/json' };
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  // Printing and hashing once per document object (documents are module-level constants).
  const prepared = new WeakMap<DocumentNode, Promise<Prepared>>();

  async function send(body: Record<string, unknown>, get: boolean): Promise<{ status: number; json: { data?: unknown; errors?: GraphqlErrorJson[] } }> {
    const res = get
      ? await doFetch(
          `${url}?${new URLSearchParams(
            Object.entries(body)
              .filter(([, v]) => v !== undefined)
              .map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
          ).toString()}`,
          { headers },
        )
      : await doFetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = (await res.json().catch(() => ({ errors: [{ message: `HTTP ${res.status} without a GraphQL body` }] }))) as { data?: unknown; errors?: GraphqlErrorJson[] };
    return { status: res.status, json };
  }

  async function run(op: Prepared, variables: unknown): Promise<unknown> {
    const base = { operationName: op.name, variables, extensions: { persistedQuery: { version: 1, sha256Hash: op.hash } } };
    let { status, json } = await send(base, options.useGetForHashes ?? false);
    if (json.errors?.[0]?.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND') {
      ({ status, json } = await send({ ...base, query: op.text }, false));
    }
    if (json.data === undefined || json.data === null || (json.errors && json.errors.length > 0 && status >= 400)) {
      throw new GraphqlRequestError(status, json.errors ?? []);
    }
    return json.data;
  }

  function prepare(document: DocumentNode): Promise<Prepared> {
    let p = prepared.get(document);
    if (!p) {
      const text = printDocument(document);
      const op = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
      p = sha256Hex(text).then((hash) => ({ name: op?.name?.value, text, hash }));
      prepared.set(document, p);
    }
    return p;
  }

  return {
    async query<N extends OperationName>(name: N, variables: OperationTypes[N]['variables']) {
      const op = persistedOperations[name];
      return (await run({ name, text: op.text, hash: op.hash }, variables)) as OperationTypes[N]['result'];
    },
    async execute<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, variables: V) {
      return (await run(await prepare(document), variables)) as R;
    },
    subscribe(name, variables, handlers) {
      return subscribeOperation({ baseUrl: options.baseUrl, token: options.token ?? '', WebSocket: options.WebSocket, backoff: options.backoff, random: options.random }, name, variables, handlers);
    },
  };
}
