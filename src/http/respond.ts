/**
 * The one HTTP response writer: every answer of the pipeline, problems included, leaves
 * through `send`, and every problem through `sendProblem`. The Koa shell (koaShell.ts)
 * renders its problems with the same `problemText`. An answer with `Connection: close`
 * (a refusal that leaves the connection unframed) marks its connection, so that a request
 * pipelined behind it is neither run nor answered (connectionClosing).
 */
import type { AnyResponse } from '../../generated/openapi/bind';
import type { Exchange, Finalizer } from './finalize';
import { PROBLEM_MEDIA_TYPE, refusal, type Refusal } from './problem';
import { serialized } from './rest/representationCache';
import { leavesBodyUnread } from './body';

/** The JSON text of a body: the representation cache's when it made this object, else serialized now. */
export function bodyText(body: unknown): string {
  if (typeof body === 'string') return body;
  return (typeof body === 'object' && body !== null && serialized.get(body)) || JSON.stringify(body);
}

/** A problem's bytes: its JSON text. */
export const problemText = (r: Refusal): string => JSON.stringify(r.problem);

/**
 * Writes the head and body in one `writeHead` + `end` and returns the status (for the
 * log line and metric). `fields` are the exchange's own (request id, CORS) followed by the
 * route's; `Vary` is added here (the route's, plus Origin when CORS is on), and
 * `Content-Length` is the body's byte length unless the route set one (a HEAD answer
 * states its GET's). HEAD sends the head alone, with the length the body would have
 * (RFC 9110 9.3.2).
 */
export function send(fin: Finalizer, x: Exchange, status: number, vary: string | undefined, body: string | undefined, lengthSet = false): number {
  const fields = x.fields;
  if (closesConnection(fields)) closeBehind(x);
  else if (leavesBodyUnread(x.req)) {
    // The rest of the body is not read: the connection ends with this answer (body.ts leavesBodyUnread).
    fields.push('Connection', 'close');
    closeBehind(x);
  }
  const v = fin.vary(vary);
  if (v !== undefined) fields.push('Vary', v);
  if (body !== undefined && !lengthSet) fields.push('Content-Length', String(Buffer.byteLength(body)));
  x.res.writeHead(status, fields);
  if (body === undefined || x.req.method === 'HEAD' || status === 304) x.res.end();
  else x.res.end(body);
  return status;
}

/**
 * Connections that end behind a refusal sent with `Connection: close` (a body over the
 * limit, a request the pipeline will not frame): a request pipelined behind it on the same
 * connection is neither run nor answered (pipeline.ts), since its answer could not be
 * sent, and a write that ran with no answer would be a change the client never learns of.
 */
const closingConnections = new WeakMap<object, number>();

/** Marks the exchange's connection as closing behind its answer: the requests that came after it on the connection (a higher `seq`) are not run. */
function closeBehind(x: Exchange): void {
  const socket = x.req.socket;
  const from = closingConnections.get(socket);
  if (from === undefined || x.seq < from) closingConnections.set(socket, x.seq);
}

/**
 * Whether the exchange's connection closes behind an answer already decided (see
 * closingConnections). Asked when a request pipelined behind that answer was routed, and
 * again right before its operation runs: its head may have been read before the refusal
 * ahead of it was decided (a body that crossed the size limit in the same read).
 */
export function connectionClosing(x: Pick<Exchange, 'req'> & { readonly seq?: number }): boolean {
  const from = closingConnections.get(x.req.socket);
  // A request not yet routed came after every answer decided on its connection; a routed one, only after those of lower seq.
  return from !== undefined && (x.seq === undefined || x.seq > from);
}

/** The answer to a request that came behind one whose answer closes the connection: never sent (node stops at the close), logged. */
export const NOT_RUN = refusal('SERVICE_UNAVAILABLE', 'Not run: the connection closes behind the answer to the request before it');

/** Whether the response fields say `Connection: close` (names as sent: any case). */
function closesConnection(fields: readonly string[]): boolean {
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i];
    if (name.length === 10 && name.toLowerCase() === 'connection' && /\bclose\b/i.test(fields[i + 1])) return true;
  }
  return false;
}

/** A problem+json answer: the refusal's fields, its JSON text. */
export function sendProblem(fin: Finalizer, x: Exchange, r: Refusal): number {
  if (r.headers) for (const name in r.headers) x.fields.push(name, r.headers[name]);
  x.fields.push('Content-Type', PROBLEM_MEDIA_TYPE);
  return send(fin, x, r.problem.status, undefined, problemText(r));
}

/** An operation's typed response: its status, headers, media type and body (JSON text from the representation cache when it has it). */
export function sendResponse(fin: Finalizer, x: Exchange, res: AnyResponse): number {
  let vary: string | undefined;
  let lengthSet = false;
  let typeSet = false;
  const headers = res.headers;
  if (headers) {
    for (const name in headers) {
      const value = headers[name];
      if (value === '') continue;
      if (name === 'Vary') vary = value;
      else {
        if (name === 'Content-Length') lengthSet = true;
        else if (name === 'Content-Type') typeSet = true; // refines the contract's media type (e.g. a charset)
        x.fields.push(name, value);
      }
    }
  }
  if (res.body === undefined || res.status === 304) return send(fin, x, res.status, vary, undefined, lengthSet);
  if (res.contentType && !typeSet) x.fields.push('Content-Type', res.contentType);
  return send(fin, x, res.status, vary, bodyText(res.body), lengthSet);
}
