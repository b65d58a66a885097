/**
 * Which query text a request runs (`GRAPHQL_PERSISTED`, `apq` by default):
 *
 * - `apq` (Apollo's automatic persisted queries, exactly as Apollo Client expects): a
 *   hash alone runs the text registered under it, or answers HTTP 200 with
 *   `PersistedQueryNotFound` (older Apollo Clients turn APQ off on any other status)
 *   so the client retries with the text; hash plus text must agree (else 400) and the
 *   pair is registered only after the text validated (the caller does that); text
 *   alone runs as sent. The build-time manifest is always known, and a manifest id sent
 *   with its operation's text plus `__typename` fields runs that text, as in allowlist mode.
 * - `allowlist`: only the manifest's operations run. A hash outside it is a 400
 *   `PERSISTED_QUERY_NOT_ALLOWED`: no fallback to text. A text runs when it is one of the
 *   manifest's operations however it is laid out (the contract's file as it stands, one
 *   line, other whitespace or commas) and with or without the `__typename` fields a
 *   client's cache adds (`allowedText`); any other text is that 400. A manifest hash
 *   sent with a text that is not its operation is a 400 mismatch, unless the text is that
 *   operation with `__typename` fields added (`sameButTypename`).
 *
 * Hashes are the plain hex SHA-256 of the exact text (no `sha256:` prefix), the same
 * hash the manifest and the SDK use.
 */
import { createHash } from 'node:crypto';
import { Kind, parse, print, visit, type DocumentNode } from 'graphql';
import { GRAPHQL_CODES, type GraphqlCode } from './errors';
import type { PersistedQueryRegistry } from './registry';
import { isPeekable } from './registry';

export type PersistedMode = 'apq' | 'allowlist';

export type Resolution = { ok: true; text: string; /** register this hash -> text once the text validated */ register?: string } | { ok: false; status: 200 | 400; code: GraphqlCode; message: string };

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

const HASH = /^[0-9a-f]{64}$/;

function persistedQueryOf(extensions: unknown): { present: false } | { present: true; hash: string } | { present: true; error: string; noHash?: true } {
  const pq = extensions && typeof extensions === 'object' ? (extensions as Record<string, unknown>).persistedQuery : undefined;
  if (pq === undefined || pq === null) return { present: false };
  if (typeof pq !== 'object') return { present: true, error: 'extensions.persistedQuery must be an object' };
  const { version, sha256Hash } = pq as Record<string, unknown>;
  if (version !== 1) return { present: true, error: 'Only persisted query version 1 is supported' };
  const invalid = { present: true, error: 'extensions.persistedQuery.sha256Hash must be a hex SHA-256' } as const;
  if (sha256Hash === undefined) return { ...invalid, noHash: true };
  if (typeof sha256Hash !== 'string') return invalid;
  // Lower-cased (and checked again) only when it is not already: one regex test and no new string in the common case.
  if (HASH.test(sha256Hash)) return { present: true, hash: sha256Hash };
  const hash = sha256Hash.toLowerCase();
  if (!HASH.test(hash)) return invalid;
  return { present: true, hash };
}

/**
 * The manifest as a Map, built once by the engine. Why not the object itself: a property
 * lookup with a key that arrived in a request makes V8 internalize that string first (one
 * more string-table entry per request to collect); a Map hashes it and is done.
 */
export const manifestMap = (manifest: Readonly<Record<string, string>>): ReadonlyMap<string, string> => new Map(Object.entries(manifest));

const fail = (status: 200 | 400, code: GraphqlCode, message: string): Resolution => ({ ok: false, status, code, message });

/**
 * Synchronous whenever the answer is in this process (text sent, the manifest, or the
 * registry's `peek`): only a hash this process has not seen waits for `registry.get`
 * (Redis when scaled out). A registered hash-only request thus does no more than a
 * text request: a header check and two map lookups (registry, then the document cache
 * keyed by the very string the registry holds).
 */
export function resolveOperation(
  params: { query?: string; extensions?: unknown },
  mode: PersistedMode,
  /** hash -> text, the build-time manifest as a Map (see manifestMap). */
  manifest: ReadonlyMap<string, string>,
  registry: PersistedQueryRegistry,
): Resolution | Promise<Resolution> {
  const pq = persistedQueryOf(params.extensions);
  const text = params.query === '' ? undefined : params.query;
  if (pq.present && 'error' in pq) {
    // Apollo's persisted-query link given a manifest (generatePersistedQueryIdsFromManifest) sends an
    // operation the manifest lacks with no id and no text: in allowlist mode, an operation not in it.
    if (mode === 'allowlist' && pq.noHash && text === undefined) return fail(400, GRAPHQL_CODES.PERSISTED_QUERY_NOT_ALLOWED, 'This operation is not in the allowlist (the persisted query names no id)');
    return fail(400, GRAPHQL_CODES.BAD_REQUEST, pq.error);
  }

  if (mode === 'allowlist') {
    const hash = pq.present ? pq.hash : text !== undefined ? sha256Hex(text) : undefined;
    if (hash === undefined) return fail(400, GRAPHQL_CODES.BAD_REQUEST, 'A query or a persisted query hash is required');
    const known = manifest.get(hash);
    if (text !== undefined && pq.present && sha256Hex(text) !== hash) return besideManifestId(text, hash, manifest);
    if (known !== undefined) return { ok: true, text: known };
    // A text sent runs when it is an allowlisted operation laid out otherwise, with no id or the
    // id of the text as sent (a client that hashes its own file: the id matched the text above).
    if (text !== undefined && allowedText(text, manifest)) return { ok: true, text };
    return fail(
      400,
      GRAPHQL_CODES.PERSISTED_QUERY_NOT_ALLOWED,
      pq.present && text === undefined
        ? 'No allowlisted operation has this id (an id is the SHA-256 of the operation as graphql-js prints it: generated/graphql/persisted-query-manifest.json and /docs/graphql list them)'
        : 'This operation is not in the allowlist',
    );
  }

  if (!pq.present) {
    if (text === undefined) return fail(400, GRAPHQL_CODES.BAD_REQUEST, 'A query or a persisted query hash is required');
    return { ok: true, text };
  }
  if (text !== undefined) {
    if (sha256Hex(text) !== pq.hash) return besideManifestId(text, pq.hash, manifest);
    return { ok: true, text, register: pq.hash };
  }
  const local = manifest.get(pq.hash) ?? (isPeekable(registry) ? registry.peek(pq.hash) : undefined);
  if (local !== undefined) return { ok: true, text: local };
  return registry.get(pq.hash).then((known): Resolution => (known === undefined ? fail(200, GRAPHQL_CODES.PERSISTED_QUERY_NOT_FOUND, 'PersistedQueryNotFound') : { ok: true, text: known }));
}

/**
 * A text sent beside an id that is not its hash. Apollo Client sends the text beside a manifest
 * id where its link must (GraphQLWsLink, for a subscription), with the `__typename` fields its
 * cache adds: in either mode that text runs when it is the id's operation but for those (they
 * cost nothing and nest no deeper), and is not registered (the id is the manifest's). Anything
 * else is a mismatch.
 */
function besideManifestId(text: string, hash: string, manifest: ReadonlyMap<string, string>): Resolution {
  const known = manifest.get(hash);
  if (known !== undefined && sameButTypename(text, known)) return { ok: true, text };
  return fail(400, GRAPHQL_CODES.PERSISTED_QUERY_HASH_MISMATCH, 'provided sha does not match query');
}

/** Per manifest: its operations printed without `__typename`, and the longest text's length (a parse bound). */
const normalizedManifests = new WeakMap<ReadonlyMap<string, string>, { printed: Set<string>; longest: number }>();

/**
 * Whether `text` is one of the manifest's operations laid out another way (graphql-js
 * `print` of both is the same) and with or without plain `__typename` fields, as clients
 * send them without the manifest (the contract's file with its final newline, urql's and
 * Apollo's printer, their caches' `__typename`). Only a text that missed the manifest by
 * hash gets here; its parse is bound to twice the longest operation's length in tokens, so
 * a long text is refused without a long parse.
 */
export function allowedText(text: string, manifest: ReadonlyMap<string, string>): boolean {
  let normalized = normalizedManifests.get(manifest);
  if (!normalized) {
    const known = [...manifest.values()];
    normalized = { printed: new Set(known.flatMap((k) => printedWithoutTypename(k) ?? [])), longest: Math.max(0, ...known.map((k) => k.length)) };
    normalizedManifests.set(manifest, normalized);
  }
  const printed = printedWithoutTypename(text, 2 * normalized.longest);
  return printed !== undefined && normalized.printed.has(printed);
}

/**
 * Whether `text` is the document `known` with plain `__typename` fields added (no alias,
 * argument or directive), as Apollo Client's cache adds them to every selection set. The
 * client's text is parsed with a token bound of twice the known text's length, so a long
 * text is refused without a long parse; anything unparsable is not the same.
 */
export function sameButTypename(text: string, known: string): boolean {
  const printed = printedWithoutTypename(text, 2 * known.length);
  return printed !== undefined && printed === printedWithoutTypename(known);
}

/** A document's text as graphql-js prints it, plain `__typename` fields left out; undefined when it does not parse within `maxTokens`. */
function printedWithoutTypename(text: string, maxTokens?: number): string | undefined {
  try {
    return print(withoutTypename(parse(text, { noLocation: true, maxTokens })));
  } catch {
    return undefined;
  }
}

function withoutTypename(document: DocumentNode): DocumentNode {
  return visit(document, {
    [Kind.FIELD]: (node) => (node.name.value === '__typename' && !node.alias && !node.arguments?.length && !node.directives?.length ? null : undefined),
  });
}
