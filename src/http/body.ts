import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { refusal, type Refusal } from './problem';
import { meetsExpectation } from './framing';
import { duplicateMember } from './duplicateMembers';
import { parseMediaType } from './mediaType';

/** Whether a request's `Content-Length` says its body is over `limit`: refused 413 before a byte of it is read (pipeline, /graphql and the Koa shell alike). */
export const declaresOverLimit = (req: IncomingMessage, limit: number): boolean => Number(req.headers['content-length']) > limit;

/** Default request body limit; `BODY_LIMIT_BYTES` overrides it. Orders are small. */
export const DEFAULT_BODY_LIMIT = 64 * 1024;

/**
 * How deep client JSON may nest (arrays and objects). Every reader of client JSON checks
 * it before parsing: `JSON.stringify` and any recursive walk of a value (a fingerprint,
 * a validator, a GraphQL variable walk) overflow the stack a few thousand levels down,
 * and no order, query or message of the contracts nests beyond a dozen.
 */
export const MAX_JSON_DEPTH = 64;

/** The media type without parameters, lowercased (`application/json; charset=utf-8` -> `application/json`); '' when there is none. */
export function baseMediaType(value: string | undefined): string {
  return (value === undefined ? null : parseMediaType(value))?.type ?? '';
}

/** Strict UTF-8: invalid sequences are an error, not U+FFFD (a BOM is dropped as JSON parsers may). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A Content-Encoding that is only `identity` (or none): the body is the bytes sent. */
const IDENTITY_ONLY = /^\s*(?:identity\s*(?:,\s*identity\s*)*)?$/i;

const TOO_LARGE = 'too large';
const UNREADABLE = 'unreadable';

/**
 * A request's body bytes, or why not: over `limit` (the stream is then paused and left
 * unread), or unreadable (an error, or the connection closed before the body's end).
 * node's parser has already framed the body (Content-Length or chunked), so what is left
 * is collecting chunks and counting them against the limit. Written here rather than with
 * raw-body, which does the same with five listeners, argument copies and a limit parser
 * per call: it cost about 5 µs of a 60 µs /graphql request, where this costs under one
 * (BENCHMARKS.md, GraphQL). body.test.ts holds both ways a body arrives to the same answers.
 */
function bodyBytes(req: IncomingMessage, limit: number): Promise<Buffer | typeof TOO_LARGE | typeof UNREADABLE> {
  // Already ended or destroyed (the client left while the request was being authenticated): no event would come.
  if (!req.readable) return Promise.resolve(UNREADABLE);
  continueIfOwed(req);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (result: Buffer | typeof TOO_LARGE | typeof UNREADABLE) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onUnreadable);
      req.off('close', onUnreadable);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limit) chunks.push(chunk);
      else {
        req.pause();
        finish(TOO_LARGE);
      }
    };
    const onEnd = () => finish(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
    // 'close' before 'end': the client went away mid-body.
    const onUnreadable = () => finish(UNREADABLE);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onUnreadable);
    req.on('close', onUnreadable);
  });
}

/** A body over `limit`: 413, and the connection closes (the rest of the body is not read: RFC 9112 9.6). */
export function tooLarge(limit: number): Refusal {
  return refusal('PAYLOAD_TOO_LARGE', `Request body exceeds ${limit} bytes`, { Connection: 'close' });
}

/**
 * Reads a request body as UTF-8 text: the service's one body reader (REST bodies,
 * /graphql). The refusals are the client's: 415 with `Accept-Encoding: identity` for a
 * body sent with a content coding (RFC 9110 8.4, 15.5.16: the service decodes none, and
 * reading gzip bytes as the text they encode would store garbage or refuse it as text),
 * 413 over the limit (checked against Content-Length before reading, and while reading;
 * the connection then closes),
 * 400 when the bytes cannot be read.
 */
export async function readRequestText(req: IncomingMessage, limit: number): Promise<string | Refusal> {
  const coding = req.headers['content-encoding'];
  if (coding !== undefined && !IDENTITY_ONLY.test(coding)) {
    return refusal('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${coding.trim()} is not supported: send the body uncoded`, { 'Accept-Encoding': 'identity' });
  }
  const bytes = await readBodyBytes(req, limit);
  if (!Buffer.isBuffer(bytes)) return bytes;
  try {
    return UTF8.decode(bytes);
  } catch {
    // RFC 8259 8.1: JSON text is UTF-8; a replacement character stored for the client's bytes would be a silent change.
    return refusal('BAD_REQUEST', 'The request body is not valid UTF-8');
  }
}

/** Whether the request carries a body (RFC 9112 6.3: a Content-Length above 0, or a Transfer-Encoding). */
export function sendsBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && Number(length) > 0) || req.headers['transfer-encoding'] !== undefined;
}

/**
 * Reads and drops the body of a request whose operation takes none, before the operation
 * runs: undefined once it is read, else readBodyBytes' refusals (413 over the limit, with
 * the connection closed; 400 when the bytes cannot be read; a content coding is no matter
 * for bytes nobody reads). A cancel sent with a
 * body is thus judged as a whole request first: one whose body breaks the framing, is over
 * the limit or never arrives (REQUEST_TIMEOUT_S) changes nothing, where it used to commit
 * before the body was read and leave the client a 400 or a 408 for a write that happened.
 */
export async function dropRequestBody(req: IncomingMessage, limit: number): Promise<Refusal | undefined> {
  const bytes = await readBodyBytes(req, limit);
  return Buffer.isBuffer(bytes) ? undefined : bytes;
}

/**
 * The body's bytes, or its refusal: 413 over the limit (checked against Content-Length
 * before reading, and while reading; the body is then left unread and the connection closes
 * after the answer, RFC 9112 9.6), 400 when the bytes cannot be read.
 */
async function readBodyBytes(req: IncomingMessage, limit: number): Promise<Buffer | Refusal> {
  const bytes = declaresOverLimit(req, limit) ? TOO_LARGE : await bodyBytes(req, limit);
  if (bytes === TOO_LARGE) return tooLarge(limit);
  if (bytes === UNREADABLE) return refusal('BAD_REQUEST', 'The request body could not be read');
  return bytes;
}

/**
 * The deepest nesting of arrays and objects in JSON text, counted without parsing (a
 * scan that skips strings), stopping as soon as it passes `max`.
 */
export function jsonDepthOver(text: string, max: number): boolean {
  if (text.length <= max) return false; // each level takes a character
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** A `\uD800`-`\uDFFF` escape: the text may name a surrogate code point on its own. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** An unpaired surrogate in a string (a `u` regex sees a pair as one astral code point). */
const LONE_SURROGATE = /\p{Cs}/u;

/** Whether any string or member name of a parsed value holds an unpaired surrogate. */
function holdsLoneSurrogate(v: unknown): boolean {
  if (typeof v === 'string') return LONE_SURROGATE.test(v);
  if (typeof v !== 'object' || v === null) return false;
  if (Array.isArray(v)) return v.some(holdsLoneSurrogate);
  return Object.entries(v).some(([k, x]) => LONE_SURROGATE.test(k) || holdsLoneSurrogate(x));
}

/**
 * Client JSON text parsed, or the 400 that says why not: not JSON, nested deeper than
 * MAX_JSON_DEPTH, a string escaping an unpaired surrogate (`"\ud800"`: RFC 8259 8.2
 * leaves it unpredictable, and UTF-8 cannot carry it, so a store would keep a replacement
 * character instead: a silent change, as for invalid UTF-8 bytes), or an object repeating a
 * member name (I-JSON, RFC 7493 2.3: JSON.parse would keep the last value without a word;
 * duplicateMembers.ts).
 */
export function parseClientJson(text: string, what = 'The request body'): { json: unknown } | Refusal {
  if (jsonDepthOver(text, MAX_JSON_DEPTH)) return refusal('BAD_REQUEST', `${what} nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch {
    return refusal('BAD_REQUEST', `${what} is not valid JSON`);
  }
  if (SURROGATE_ESCAPE.test(text) && holdsLoneSurrogate(json)) return refusal('BAD_REQUEST', `${what} holds an unpaired surrogate (\\uD800-\\uDFFF), which UTF-8 cannot carry`);
  const duplicate = duplicateMemberRefusal(text, what);
  return duplicate ?? { json };
}

/**
 * The 400 for JSON text (already parsed) that repeats a member name in one object, naming
 * it and where; undefined when it repeats none. Every reader of client JSON calls it.
 */
export function duplicateMemberRefusal(text: string, what = 'The request body'): Refusal | undefined {
  const d = duplicateMember(text);
  if (!d) return undefined;
  const name = d.name.length > 100 ? `${d.name.slice(0, 100)}...` : d.name;
  return refusal('BAD_REQUEST', `${what} repeats the member "${name}" in one object: I-JSON (RFC 7493) forbids duplicate names`, undefined, {
    errors: [{ pointer: d.pointer.length > 300 ? `${d.pointer.slice(0, 300)}...` : d.pointer, rule: 'duplicate-member', message: `member "${name}" appears more than once in the same object` }],
  });
}

/** Reads and parses a JSON request body: `readRequestText`, then 400 for an empty body or text that is not JSON. */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<{ json: unknown } | Refusal> {
  const raw = await readRequestText(req, limit);
  if (typeof raw !== 'string') return raw;
  if (raw.trim() === '') return refusal('BAD_REQUEST', 'A JSON request body is required');
  return parseClientJson(raw);
}

/** Requests whose `Expect: 100-continue` is not answered yet, with the response to send the 100 on. */
const continueOwed = new WeakMap<IncomingMessage, ServerResponse>();

/** Sends the 100 Continue a request waits for, once, when its body is about to be read (a reader, or a Koa route that may read it). */
export function continueIfOwed(req: IncomingMessage): void {
  const res = continueOwed.get(req);
  if (res === undefined) return;
  continueOwed.delete(req);
  if (!res.headersSent) res.writeContinue();
}

/**
 * Whether an answer to `req` leaves part of its body unread: a body declared (RFC 9112 6.3)
 * whose last byte has not been parsed, because no step read it (a refusal before the body:
 * 401, 404, 405, 415; an OPTIONS; a route that takes none) or because it is over the limit.
 * The answer then closes the connection (respond.ts `send`, the Koa shell): the rest is not
 * read. Otherwise node:http would read and drop it to keep the connection, at any length,
 * and a body still trickling in would time out after its answer with a second answer, 408.
 * A request still owed its 100 Continue has not sent its body at all: the client may never
 * send it, and what it sends next could not be told from it. A body already received in
 * full (the common case: it came with the head) is dropped by node and the connection kept.
 */
export function leavesBodyUnread(req: IncomingMessage): boolean {
  return !req.complete && sendsBody(req);
}

/**
 * `Expect: 100-continue` (RFC 9110 10.1.1): the client sends the body only once told 100
 * Continue. node:http tells every such request to continue at once; here the 100 goes out
 * when a step starts reading the body (continueIfOwed): a request refused first (401, 404,
 * 405, 415), or one with no body to read, gets its final answer alone, with `Connection:
 * close` (leavesBodyUnread), so the client never sends bytes that would not be read. A
 * request whose declared body is over `limit` is never told to continue: its final answer
 * (413 from the body reader, or any refusal that comes first) closes the connection.
 */
export function answerExpectations(server: Server, limit: number): void {
  server.on('checkContinue', (req: IncomingMessage, res) => {
    // An expectation beside 100-continue (`100-continue, foo`) is not met: no 100, the pipeline's 417 (framing.ts).
    if (!meetsExpectation(req.headers.expect ?? '')) res.setHeader('Connection', 'close');
    else if (declaresOverLimit(req, limit)) res.setHeader('Connection', 'close');
    else if (sendsBody(req)) continueOwed.set(req, res);
    server.emit('request', req, res);
  });
  // Any other expectation: served by the pipeline, whose first step refuses it 417 as a problem (framing.ts).
  server.on('checkExpectation', (req: IncomingMessage, res) => server.emit('request', req, res));
}
