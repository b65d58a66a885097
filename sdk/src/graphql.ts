/**
 * `@orderline/sdk/graphql`: the typed GraphQL client.
 *
 * - `query(name, variables)`: the contract's operations (listed with their hashes on the service's `/docs/graphql`) by name, typed by
 *   codegen; their text and hash are the generated manifest's, the ones the server's
 *   allowlist holds.
 * - `execute(document, variables)`: any `TypedDocumentNode` a client team generates for
 *   its own queries (graphql-codegen, gql.tada...). Its text is graphql-js's `print` of
 *   the document, the same printer the contract's operations are printed with, and its hash
 *   the plain hex SHA-256 of that exact UTF-8 text, as the server and the allowlist
 *   compute it (no `sha256:` prefix: one hash serves APQ and the allowlist). So a client document equal to a
 *   contract operation has the contract's hash, and registering a partner's document in
 *   the allowlist means adding the same printed text.
 *
 * Both are sent hash first (APQ, Apollo's protocol). Every failure is an OrderlineError
 * (a GraphqlRequestError when the server answered with errors: all of them, and any
 * partial data, are on it); 429 THROTTLED, 503 and network errors are retried after
 * Retry-After; `signal` cancels an operation, `timeoutMs` bounds it.
 * Only when the server answers
 * PERSISTED_QUERY_NOT_FOUND is the text sent, once, with its hash, so the next call is
 * hash-only again; against an allowlist server the hash is all it ever sends.
 *
 * @packageDocumentation
 */
import type { DocumentNode, OperationDefinitionNode } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { persistedOperations, type OperationTypes } from './generated/persisted.js';
import { OrderlineError, retryAfterMs, type GraphqlErrorCode, type GraphqlErrorJson } from './errors.js';
import { baseUrlOf, sleep, tokenOf, withTimeout, type TokenSource } from './transport.js';
import { GraphqlRequestError } from './graphqlErrors.js';
import { subscribeOperation, type GraphqlSubscription, type GraphqlWebSocketCtor, type SubscriptionHandlers, type SubscriptionName } from './subscriptions.js';
import type { Backoff } from './realtime.js';

export type { TypedDocumentNode, OperationTypes, GraphqlErrorCode, GraphqlErrorJson };
// Every failure of this entry is an OrderlineError: importable from here as from the others.
export { OrderlineError };
export type { OrderlineErrorCode } from './errors.js';
export type OperationName = keyof OperationTypes;
/** The contract's operations served over HTTP (`query`): its queries and mutations; a subscription is `subscribe`'s. */
export type QueryName = Exclude<OperationName, SubscriptionName>;

export { GraphqlRequestError } from './graphqlErrors.js';
export { type GraphqlSubscription, type GraphqlWebSocketCtor, type SubscriptionHandlers, type SubscriptionName } from './subscriptions.js';

/** Plain hex SHA-256 of the UTF-8 text (Web Crypto), the server's hash. Web Crypto's `subtle` exists only in secure contexts (https, localhost). */
export async function sha256Hex(text: string): Promise<string> {
  const subtle = (globalThis.crypto as Partial<typeof globalThis.crypto> | undefined)?.subtle;
  if (!subtle) {
    throw new OrderlineError(0, undefined, {
      source: 'client',
      code: 'INSECURE_CONTEXT',
      message: 'no crypto.subtle (not a secure context): use https, query() or options.sha256',
    });
  }
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

export interface GraphqlClientOptions {
  baseUrl: string;
  /** A bearer token, or a function returning the current one (called before every request). */
  token?: TokenSource | undefined;
  fetch?: typeof fetch | undefined;
  /** Extra headers sent with every request. */
  headers?: Record<string, string> | undefined;
  /** GET for the hash-only request (cacheable by HTTP caches); the retry with text is always a POST. */
  useGetForHashes?: boolean | undefined;
  /** Attempts in all when the server answers 429 THROTTLED or 503, or no answer comes (default 3; 1: no retry). */
  attempts?: number | undefined;
  /** Longest wait between attempts, ms (default 5000): a `Retry-After` asking for longer fails the operation at once. */
  maxDelayMs?: number | undefined;
  /** Fails an operation (its retries included) with OrderlineError TIMEOUT after this many ms (absent or 0: never). */
  timeoutMs?: number | undefined;
  /** SHA-256 as hex, for `execute()` where Web Crypto's `subtle` is missing (insecure contexts). */
  sha256?: ((text: string) => Promise<string>) | undefined;
  /** Subscriptions: a WebSocket constructor (the `ws` package in Node 20; default the platform's). */
  WebSocket?: GraphqlWebSocketCtor | undefined;
  /** Subscriptions: reconnect backoff (default base 500 ms, cap 30 s) and its random source. */
  backoff?: Partial<Backoff> | undefined;
  random?: (() => number) | undefined;
  /** Subscriptions: drop a silent connection after this many ms and resubscribe (see `streamOrder`'s `idleTimeoutMs`). */
  idleTimeoutMs?: number | undefined;
}

/** Per operation: cancel it, add headers. */
export interface OperationOptions {
  signal?: AbortSignal | undefined;
  headers?: Record<string, string> | undefined;
}

export interface GraphqlClient {
  /** A contract operation by name (the service's `/docs/graphql` lists them). */
  query<N extends QueryName>(name: N, variables: OperationTypes[N]['variables'], options?: OperationOptions): Promise<OperationTypes[N]['result']>;
  /** Any typed document, e.g. one the client team generated with graphql-codegen. */
  execute<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, variables: V, options?: OperationOptions): Promise<R>;
  /**
   * A contract subscription by name over WebSocket (graphql-transport-ws): resumes by itself
   * after a drop with `since` = the last seq delivered, with jittered backoff. Needs a token.
   */
  subscribe<N extends SubscriptionName>(
    name: N,
    variables: Omit<OperationTypes[N]['variables'], 'since'> & { since?: number | undefined },
    handlers: SubscriptionHandlers<OperationTypes[N]['result']>,
  ): GraphqlSubscription;
}

interface Prepared {
  name: string | undefined;
  text: string;
  hash: string;
}

interface Answer {
  status: number;
  headers: Headers;
  json: { data?: unknown; errors?: GraphqlErrorJson[] };
}

export function createGraphqlClient(options: GraphqlClientOptions): GraphqlClient {
  const doFetch = options.fetch ?? ((input: string, init?: RequestInit) => fetch(input, init));
  const url = `${baseUrlOf(options.baseUrl)}/graphql`;
  const { attempts = 3, maxDelayMs = 5000 } = options;
  const hash = options.sha256 ?? sha256Hex;
  // Printing and hashing once per document object (documents are module-level constants).
  const prepared = new WeakMap<DocumentNode, Promise<Prepared>>();

  async function sendOnce(body: Record<string, unknown>, get: boolean, call: OperationOptions, signal: AbortSignal | undefined, token: string | undefined): Promise<Answer> {
    const headers: Record<string, string> = { accept: 'application/graphql-response+json, application/json', ...options.headers, ...call.headers };
    if (token) headers['authorization'] = `Bearer ${token}`;
    const init: RequestInit = signal ? { headers, signal } : { headers };
    const res = get
      ? await doFetch(
          `${url}?${new URLSearchParams(
            Object.entries(body)
              .filter(([, v]) => v !== undefined)
              .map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
          ).toString()}`,
          init,
        )
      : await doFetch(url, { ...init, method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = (await res.json().catch(() => ({ errors: [{ message: `HTTP ${res.status} without a GraphQL body` }] }))) as Answer['json'];
    return { status: res.status, headers: res.headers, json };
  }

  /** Queries are safe to repeat: retried on 429 THROTTLED (after its Retry-After), 503 and network errors. */
  async function send(body: Record<string, unknown>, get: boolean, call: OperationOptions, signal: AbortSignal | undefined): Promise<Answer> {
    for (let attempt = 1; ; attempt++) {
      let answer: Answer | undefined;
      // The token function's own failure is the caller's error as thrown (as REST's), not a network error to retry.
      const token = await tokenOf(options.token);
      try {
        answer = await sendOnce(body, get, call, signal, token);
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        if (attempt >= attempts) throw new OrderlineError(0, undefined, { source: 'client', code: 'NETWORK_ERROR', message: err instanceof Error ? err.message : String(err), cause: err });
      }
      if (answer && ((answer.status !== 429 && answer.status !== 503) || attempt >= attempts)) return answer;
      const extension = answer?.json.errors?.[0]?.extensions?.['retryAfterSeconds'];
      const after = answer ? (retryAfterMs(answer.headers.get('retry-after')) ?? (typeof extension === 'number' ? extension * 1000 : undefined)) : undefined;
      // Asked to wait longer than the cap: a retry sooner is refused again, so the answer is the caller's now.
      if (answer && (after ?? 0) > maxDelayMs) return answer;
      await sleep(Math.min(maxDelayMs, after ?? 200 * 2 ** attempt) + Math.random() * 100, signal);
    }
  }

  async function run(op: Prepared, variables: unknown, call: OperationOptions = {}): Promise<unknown> {
    const t = withTimeout(call.signal, options.timeoutMs);
    try {
      const base = { operationName: op.name, variables, extensions: { persistedQuery: { version: 1, sha256Hash: op.hash } } };
      let { status, headers, json } = await send(base, options.useGetForHashes ?? false, call, t.signal);
      if (json.errors?.[0]?.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND') {
        ({ status, headers, json } = await send({ ...base, query: op.text }, false, call, t.signal));
      }
      // Any error fails the operation, partial data or not: nothing is dropped (the error carries both).
      if ((json.errors && json.errors.length > 0) || json.data === undefined || json.data === null || status >= 400) {
        const after = retryAfterMs(headers.get('retry-after'));
        throw new GraphqlRequestError(status, json.errors ?? [], { requestId: headers.get('x-request-id') ?? undefined, data: json.data ?? undefined, retryAfterMs: after });
      }
      return json.data;
    } finally {
      t.done();
    }
  }

  function prepare(document: DocumentNode): Promise<Prepared> {
    let p = prepared.get(document);
    if (!p) {
      const op = document.definitions.find((d): d is OperationDefinitionNode => String(d.kind) === 'OperationDefinition');
      p = import('./print.js').then(async ({ printDocument }) => {
        const text = printDocument(document);
        return { name: op?.name?.value, text, hash: await hash(text) };
      });
      p.catch(() => prepared.delete(document));
      prepared.set(document, p);
    }
    return p;
  }

  return {
    async query<N extends QueryName>(name: N, variables: OperationTypes[N]['variables'], call?: OperationOptions) {
      const op = persistedOperations[name];
      return (await run({ name, text: op.text, hash: op.hash }, variables, call)) as OperationTypes[N]['result'];
    },
    async execute<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, variables: V, call?: OperationOptions) {
      return (await run(await prepare(document), variables, call)) as R;
    },
    subscribe(name, variables, handlers) {
      return subscribeOperation(
        { baseUrl: options.baseUrl, token: options.token, WebSocket: options.WebSocket, backoff: options.backoff, random: options.random, idleTimeoutMs: options.idleTimeoutMs },
        name,
        variables,
        handlers,
      );
    },
  };
}
