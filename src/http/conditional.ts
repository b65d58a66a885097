/**
 * Conditional requests, RFC 9110 13.1-13.2, as pure functions over header values.
 *
 * - If-Match: strong comparison (13.1.1), `*` matches any current representation;
 * - If-None-Match: weak comparison (13.1.2), `*` matches any;
 * - evaluation order of 13.2.2: If-Match first (false -> 412), then If-None-Match
 *   (false -> 304 for GET/HEAD, 412 otherwise);
 * - 13.2.1: preconditions are evaluated only when the request would otherwise
 *   succeed, so callers answer 404 (or any non-2xx) before calling `evaluate`.
 *
 * Written here rather than taken from jshttp's `fresh` (Koa's `ctx.fresh`): `fresh` answers
 * a cache's question, not an origin's. It reports a request with `Cache-Control: no-cache`
 * as stale, and fetch() adds that field to every conditional request it sends, where an
 * origin must still answer 304 (RFC 9110 13.2.1: no-cache binds caches); it treats
 * `If-None-Match: *` as matching a response with no tag, and knows neither If-Match nor
 * strong comparison, nor the 412 of a write.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { refusal, type Refusal } from './problem';

export interface EntityTag {
  weak: boolean;
  /** The quoted part, quotes included: `"abc"`. */
  opaque: string;
}

/** A parsed If-Match / If-None-Match value: `*`, a list of tags, or unparseable. */
export type TagCondition = { any: true } | { any: false; tags: EntityTag[] } | { invalid: true };

const TAG = /^\s*(W\/)?("[\x21\x23-\x7e\x80-\xff]*")\s*$/;

export function parseTagCondition(header: string): TagCondition {
  if (header.trim() === '*') return { any: true };
  const tags: EntityTag[] = [];
  for (const part of header.split(',')) {
    if (part.trim() === '') continue; // RFC 9110 5.6.1: empty list elements are ignored
    const m = TAG.exec(part);
    if (!m) return { invalid: true };
    tags.push({ weak: m[1] !== undefined, opaque: m[2] });
  }
  return tags.length === 0 ? { invalid: true } : { any: false, tags };
}

export function parseTag(tag: string): EntityTag {
  const m = TAG.exec(tag);
  if (!m) throw new Error(`not an entity tag: ${tag}`);
  return { weak: m[1] !== undefined, opaque: m[2] };
}

/** 13.1.1: both strong and identical. */
export const strongMatch = (a: EntityTag, b: EntityTag): boolean => !a.weak && !b.weak && a.opaque === b.opaque;
/** 13.1.2: identical opaque parts, weakness ignored. */
export const weakMatch = (a: EntityTag, b: EntityTag): boolean => a.opaque === b.opaque;

export type Outcome = 'proceed' | 'not_modified' | 'precondition_failed';

export interface ConditionalRequest {
  method: string;
  ifMatch?: string;
  ifNoneMatch?: string;
  /**
   * The tags the current state answers to: the selected representation's tag first.
   * If-Match accepts any representation of the current revision, so a client that
   * read version 1 can write with version 2 (the lost-update check is about the
   * revision, not the media type); If-None-Match on GET/HEAD uses only the selected one
   * (a cache validates the representation it holds), on a write all of them. `all` is
   * called only when a list of tags must be compared (not for `*`, not on a read): a
   * write with `If-Match: *` never builds the tags of every representation.
   */
  current: { selected: string; all: () => readonly string[] };
}

/** If-Match (13.1.1): `*`, or a listed tag strongly matching one of `current` (called only for a list); an unparseable field fails. */
function ifMatchHolds(ifMatch: string, current: () => readonly string[]): boolean {
  const c = parseTagCondition(ifMatch);
  if ('invalid' in c) return false;
  if (c.any) return true;
  const all = current();
  return c.tags.some((t) => all.some((cur) => strongMatch(t, parseTag(cur))));
}

/** RFC 9110 13.2.2, steps 1 and 3 (this service has no Last-Modified validators). */
export function evaluate(req: ConditionalRequest): Outcome {
  if (req.ifMatch !== undefined && !ifMatchHolds(req.ifMatch, () => req.current.all())) return 'precondition_failed';
  if (req.ifNoneMatch !== undefined) {
    const c = parseTagCondition(req.ifNoneMatch);
    // A read validates the representation the cache holds; a write is refused when the
    // client names any representation of the current state (it asked to write only if
    // the state is not one it knows).
    const safe = req.method === 'GET' || req.method === 'HEAD';
    const current = safe ? [parseTag(req.current.selected)] : req.current.all().map(parseTag);
    const matched = 'invalid' in c ? false : c.any ? true : c.tags.some((t) => current.some((cur) => weakMatch(t, cur)));
    if (matched) return req.method === 'GET' || req.method === 'HEAD' ? 'not_modified' : 'precondition_failed';
  }
  return 'proceed';
}

/**
 * The preconditions of a write whose target has representations but no entity tag (POST
 * /orders: the collection), judged by the pipeline for every write that does not judge its
 * own (RFC 9110 13.1: the origin MUST evaluate them when the request would otherwise
 * succeed). If-Match holds only as `*` (the collection exists, and no tag names it);
 * If-None-Match `*` fails (it does exist), a list of tags holds (none can match). A field
 * that is neither `*` nor a list of entity tags is the client's error: `invalid`, as the
 * writes that judge their own answer it (400).
 */
export function writeWithoutTags(ifMatch: string | undefined, ifNoneMatch: string | undefined): 'proceed' | 'precondition_failed' | { invalid: TagField } {
  const invalid = malformedTagField(ifMatch, ifNoneMatch);
  if (invalid) return { invalid };
  // A write's outcome is never `not_modified` (that is a read's).
  return evaluate({ method: 'POST', ifMatch, ifNoneMatch, current: { selected: '""', all: noTags } }) === 'proceed' ? 'proceed' : 'precondition_failed';
}

/**
 * If-Match and If-None-Match on a request whose target has no entity tag and that does not
 * judge its own (writeWithoutTags): a REST write (pipeline.ts), a POST /graphql. 412 when
 * they fail, 400 when one is no list of entity tags; undefined for a read (GET, HEAD and
 * OPTIONS are judged on the representation they get) or when they hold.
 */
export function writePreconditions(req: IncomingMessage): Refusal | undefined {
  const method = req.method;
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return undefined;
  const { 'if-match': im, 'if-none-match': inm } = req.headers;
  if (im === undefined && inm === undefined) return undefined;
  const outcome = writeWithoutTags(im, inm);
  if (outcome === 'proceed') return undefined;
  if (outcome === 'precondition_failed') return refusal('PRECONDITION_FAILED', 'The target exists and has no entity tag: only If-Match: * holds, and If-None-Match: * fails');
  const { detail, extra } = malformedTagProblem(outcome.invalid);
  return refusal('VALIDATION_FAILED', detail, undefined, extra);
}

export type TagField = 'If-Match' | 'If-None-Match';

/** The first of If-Match and If-None-Match sent as neither `*` nor a list of entity tags, if any. */
export function malformedTagField(ifMatch: string | undefined, ifNoneMatch: string | undefined): TagField | undefined {
  if (ifMatch !== undefined && 'invalid' in parseTagCondition(ifMatch)) return 'If-Match';
  if (ifNoneMatch !== undefined && 'invalid' in parseTagCondition(ifNoneMatch)) return 'If-None-Match';
  return undefined;
}

/** The 400's detail and `errors` for a malformed If-Match or If-None-Match, the same for every write. */
export function malformedTagProblem(field: TagField): { detail: string; extra: { errors: { pointer: string; rule: string; message: string }[] } } {
  return {
    detail: `${field} must be * or a list of quoted entity tags, e.g. "1-1-v2j"`,
    extra: { errors: [{ pointer: `header:${field}`, rule: 'entity-tag', message: 'must be * or a comma-separated list of quoted entity tags (RFC 9110 8.8.3)' }] },
  };
}

/** A strong entity tag of a body's bytes (documents, GraphQL GET answers): the first 16 bytes of their SHA-256, base64url. */
export const contentTag = (body: string): string => `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;

/** The `all` of a read: If-None-Match on GET and HEAD compares only the selected tag. */
export const noTags = (): readonly string[] => [];

/** Fields a 304 carries from the 200 it stands for (RFC 9110 15.4.5). */
const NOT_MODIFIED_FIELDS = ['ETag', 'Cache-Control', 'Content-Location', 'Date', 'Expires', 'Vary'] as const;

/**
 * If-Match on a GET or HEAD (RFC 9110 13.1.1: the origin evaluates it before performing
 * any method): true when the field is `*`, or lists a tag that strongly matches the
 * selected representation's `etag`; false when it lists none that does, when the
 * response has no tag to match, or when the field cannot be parsed. For a 2xx or a 304
 * only (13.2.1: preconditions are ignored when the answer would be another error), which
 * the caller sees to. A 304 the handler decided early carries the same selected tag, so
 * If-Match is judged on it too (13.2.2: If-Match comes before If-None-Match).
 */
export function readMatches(ifMatch: string, etag: string | undefined): boolean {
  return ifMatchHolds(ifMatch, () => (etag === undefined ? [] : [etag]));
}

/**
 * The conditional step of every read (GET, HEAD) once its answer is known, REST operations
 * and /graphql alike, in RFC 9110 13.2.2's order: If-Match first (`precondition_failed`
 * when it names no tag of the selected representation), then If-None-Match on a 200 that
 * carries an ETag the client holds (weak comparison: `not_modified`). Only a 2xx or a 304
 * is judged (13.2.1: preconditions are ignored when the answer would be another error).
 * Handlers that can decide a 304 before building the body (the order read, the docs) do so
 * themselves with `evaluate`; every other read that declares an ETag gets it here, with
 * no code of its own. Writes judge theirs before writing (`writePreconditions`, or the
 * handler's own with the stored revision).
 */
export function judgeRead(method: string, headers: IncomingHttpHeaders, status: number, etag: string | undefined): 'precondition_failed' | 'not_modified' | undefined {
  if ((method !== 'GET' && method !== 'HEAD') || !((status >= 200 && status < 300) || status === 304)) return undefined;
  const ifMatch = headers['if-match'];
  if (ifMatch !== undefined && !readMatches(ifMatch, etag)) return 'precondition_failed';
  const ifNoneMatch = headers['if-none-match'];
  if (ifNoneMatch === undefined || status !== 200 || etag === undefined) return undefined;
  return evaluate({ method, ifNoneMatch, current: { selected: etag, all: noTags } }) === 'not_modified' ? 'not_modified' : undefined;
}

/** The 304 that stands for a 200 (`judgeRead`'s `not_modified`): the fields RFC 9110 15.4.5 names, no body. */
export function notModified(res: { headers?: Readonly<Record<string, string>> }): { status: 304; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  for (const name of NOT_MODIFIED_FIELDS) {
    const value = res.headers?.[name];
    if (value !== undefined) headers[name] = value;
  }
  return { status: 304, headers };
}
