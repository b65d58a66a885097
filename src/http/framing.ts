/**
 * Requests node:http parses but leaves to the server to refuse, refused before any route is
 * chosen (pipeline.ts), with `Connection: close` (what follows on the connection cannot be
 * trusted to be framed as the client meant):
 *
 * - HTTP/1.1 without `Host`: 400 (RFC 9112 3.2 MUST). node's own check would answer a bare
 *   400, so the server turns it off (server.ts) and this answers it.
 * - an expectation other than `100-continue`: 417 (RFC 9110 10.1.1). node hands such a
 *   request to 'checkExpectation' (body.ts), which serves it here.
 * - a transfer coding other than `chunked` (`gzip, chunked`): 501 (RFC 9112 6.1 SHOULD).
 *   node takes the chunks off and would hand the still-coded bytes on as the body.
 *
 * Three header reads on every request; none of the three is sent by ordinary clients.
 */
import type { IncomingMessage } from 'node:http';
import { refusal, type Refusal } from './problem';

/** node's own test for the expectation it continues (lib/_http_server.js). */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;
const CHUNKED = /^\s*chunked\s*$/i;
const CLOSE = { Connection: 'close' };

export function framingRefusal(req: IncomingMessage): Refusal | undefined {
  const h = req.headers;
  if (h.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) return refusal('BAD_REQUEST', 'An HTTP/1.1 request needs a Host header (RFC 9112 3.2)', CLOSE);
  const expect = h.expect;
  if (expect !== undefined && !CONTINUE.test(expect)) return refusal('EXPECTATION_FAILED', 'The only expectation this server meets is 100-continue', CLOSE);
  const coding = h['transfer-encoding'];
  if (coding !== undefined && !CHUNKED.test(coding)) return refusal('NOT_IMPLEMENTED', 'The only transfer coding this server reads is chunked (send the body uncoded)', CLOSE);
  return undefined;
}
