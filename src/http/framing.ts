/**
 * Requests node:http parses but leaves to the server to refuse, refused before any route is
 * chosen (pipeline.ts), with `Connection: close` (what follows on the connection cannot be
 * trusted to be framed as the client meant):
 *
 * - HTTP/1.1 without `Host`, or with a Host that is no `uri-host [ ":" port ]` (`a b/c@d`):
 *   400 (RFC 9112 3.2 MUST; an empty Host is allowed). node's own check would answer a bare
 *   400, so the server turns it off (server.ts) and this answers it.
 * - two `Host` fields (RFC 9112 3.2 MUST), two `Authorization` or two `Content-Type` fields:
 *   400. node keeps the first and drops the second, where a proxy in front may have acted on
 *   the last: the two would serve, authenticate or parse different requests.
 * - an expectation other than `100-continue` alone (`foo`, `100-continue, foo`): 417 (RFC
 *   9110 10.1.1). node continues any field that contains `100-continue`; body.ts asks
 *   `meetsExpectation` first, and this answers the rest.
 * - `Transfer-Encoding` in an HTTP/1.0 request: 400 (RFC 9112 6.1 MUST: faulty framing; node
 *   would read the chunks, where an HTTP/1.0 proxy in front reads to the connection's end).
 * - a request line whose version is not HTTP/1.x (`HTTP/2.0`, `HTTP/0.9` with headers): 505
 *   (RFC 9110 15.6.6). node parses both and would serve them as HTTP/1.1; HTTP/2 is spoken only
 *   after its connection preface, which node answers 400 as a malformed request.
 * - a request-target over MAX_TARGET_BYTES (16 KiB): 414 (RFC 9112 3 MUST); header fields
 *   over MAX_FIELD_BYTES (16 KiB, each line counted as name, `: `, value, CRLF, the value
 *   as node trims it), or MAX_FIELDS of them: 431 (RFC 6585 5). node's parser takes a head
 *   whose target, field names and values together stay under PARSER_HEAD_BYTES, more than
 *   the two limits together, so that each part is judged on its own and a long URL is told
 *   so (node alone would answer 431 to either); a head over that is node's 431 (upgrade.ts).
 * - a transfer coding other than `chunked` (`gzip, chunked`): 501 (RFC 9112 6.1 SHOULD).
 *   node takes the chunks off and would hand the still-coded bytes on as the body. Unless
 *   `chunked` is not the last coding (`xchunked`, `chunked, gzip`): then the body's length
 *   cannot be known at all, 400 (RFC 9112 6.3 MUST).
 *
 * The target's length, three header reads and one pass over the raw fields (their lengths, mostly) on every
 * request; none of these is sent by ordinary clients. WebSocket handshakes take the same
 * checks (realtime/ws.ts).
 */
import type { IncomingMessage } from 'node:http';
import { refusal, type Refusal } from './problem';

/** The one expectation met: `100-continue` and nothing else (node's own test admits it among others). */
const CONTINUE = /^[ \t,]*100-continue[ \t,]*$/i; // empty list elements are ignored (RFC 9110 5.6.1)
/** RFC 9112 3.2 / RFC 3986 3.2.2: an IP literal or a reg-name (IPv4 included), then an optional port. */
const HOST = /^(?:\[[0-9A-Za-z:.]+\]|[A-Za-z0-9\-._~%!$&'()*+,;=]*)(?::[0-9]*)?$/;

/** Whether an `Expect` field asks only for 100 Continue, the one expectation this server meets. */
export function meetsExpectation(expect: string): boolean {
  return CONTINUE.test(expect);
}
/** chunked alone, after empty list elements if any (`, chunked`: RFC 9110 5.6.1 ignores them; node reads it as chunked). */
const CHUNKED = /^[\s,]*chunked\s*$/i;
const LAST_CHUNKED = /(?:^|,)\s*chunked\s*$/i;
const CLOSE = { Connection: 'close' };

/** The longest request-target served: 414 above (RFC 9112 3 recommends at least 8,000 octets). */
export const MAX_TARGET_BYTES = 16 * 1024;
/** The most bytes of header fields served, each line as sent (name, `: `, value, CRLF): 431 above. */
export const MAX_FIELD_BYTES = 16 * 1024;
/**
 * The most header fields served: 431 above. node keeps at most about a thousand of a
 * request's fields in `rawHeaders` and drops the rest unseen, so a request that reaches
 * this many is refused rather than judged by the fields node kept (a second Authorization
 * past the thousandth would go unseen).
 */
export const MAX_FIELDS = 1000;
/** node:http's limit on a whole head (its `maxHeaderSize`, server.ts): room for both limits above, the request line and a margin. */
export const PARSER_HEAD_BYTES = 40 * 1024;

/**
 * One pass over the raw fields: the field a request carries twice of `Host`, `Authorization`
 * and `Content-Type` (node keeps only the first of each), if any, and the fields' bytes.
 */
function scanFields(raw: readonly string[]): { repeated: string | undefined; bytes: number } {
  let host = 0;
  let authorization = 0;
  let contentType = 0;
  let bytes = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const n = raw[i];
    bytes += n.length + raw[i + 1].length + 4;
    if (n.length === 4 && n.toLowerCase() === 'host') host++;
    else if (n.length === 13 && n.toLowerCase() === 'authorization') authorization++;
    else if (n.length === 12 && n.toLowerCase() === 'content-type') contentType++;
  }
  const repeated = host > 1 ? 'Host' : authorization > 1 ? 'Authorization' : contentType > 1 ? 'Content-Type' : undefined;
  return { repeated, bytes };
}

/** The 505 of a request in an HTTP version this server does not speak, parsed by node (`2.0`) or not (`3.0`: upgrade.ts). */
export function versionRefusal(version: string): Refusal {
  return refusal('HTTP_VERSION_NOT_SUPPORTED', `This server speaks HTTP/1.1 and HTTP/1.0, not HTTP/${version}`, CLOSE);
}

export function framingRefusal(req: IncomingMessage): Refusal | undefined {
  if (req.httpVersionMajor !== 1) return versionRefusal(req.httpVersion);
  if ((req.url?.length ?? 0) > MAX_TARGET_BYTES) return refusal('URI_TOO_LONG', `The request-target is longer than ${MAX_TARGET_BYTES} bytes`, CLOSE);
  const fields = scanFields(req.rawHeaders);
  if (req.rawHeaders.length >= 2 * MAX_FIELDS) return refusal('HEADER_FIELDS_TOO_LARGE', `A request carries fewer than ${MAX_FIELDS} header fields`, CLOSE);
  if (fields.bytes > MAX_FIELD_BYTES) return refusal('HEADER_FIELDS_TOO_LARGE', `The header fields take more than ${MAX_FIELD_BYTES} bytes`, CLOSE);
  const h = req.headers;
  if (h.host === undefined) {
    if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1) return refusal('BAD_REQUEST', 'An HTTP/1.1 request needs a Host header (RFC 9112 3.2)', CLOSE);
  } else if (!HOST.test(h.host)) return refusal('BAD_REQUEST', 'The Host header is no host[:port] (RFC 9112 3.2)', CLOSE);
  const repeated = fields.repeated;
  if (repeated !== undefined) return refusal('BAD_REQUEST', `A request carries one ${repeated} field, not two (RFC 9110 5.3)`, CLOSE);
  const expect = h.expect;
  if (expect !== undefined && !CONTINUE.test(expect)) return refusal('EXPECTATION_FAILED', 'The only expectation this server meets is 100-continue', CLOSE);
  const coding = h['transfer-encoding'];
  if (coding !== undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 0) return refusal('BAD_REQUEST', 'An HTTP/1.0 message has no Transfer-Encoding: its framing is faulty (RFC 9112 6.1)', CLOSE);
  if (coding !== undefined && !CHUNKED.test(coding)) {
    if (!LAST_CHUNKED.test(coding)) return refusal('BAD_REQUEST', 'chunked must be the last transfer coding: the body length cannot be read (RFC 9112 6.3)', CLOSE);
    return refusal('NOT_IMPLEMENTED', 'The only transfer coding this server reads is chunked (send the body uncoded)', CLOSE);
  }
  return undefined;
}
