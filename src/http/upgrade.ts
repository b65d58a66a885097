/**
 * What node:http hands over on the raw socket, before the pipeline: the server's 'upgrade'
 * event, before any WebSocket endpoint sees it, and its 'clientError' event (a request it
 * could not parse, and a CONNECT: `answerClientErrors` at the end). Both answer through `writeRefusal`.
 *
 * Requests that carry an `Upgrade` header but are not a WebSocket handshake (`curl --http2`
 * sends `Upgrade: h2c` on a plain GET): once the server listens for 'upgrade' (the
 * WebSocket endpoints do, realtime/index.ts), node:http hands every request with an
 * `Upgrade` header to that listener, detached from the HTTP parser: without more, such a
 * request would never reach the pipeline. RFC 9110 7.8 lets a server ignore `Upgrade`, and
 * that is what the service does: the request's head is written again without `Upgrade`,
 * the `upgrade` token of `Connection` and `HTTP2-Settings`, put back in front of the bytes
 * that followed it, and the socket is handed to node:http as a new connection, so the
 * pipeline serves it like any other (body, keep-alive and all).
 *
 * Two guards keep the head that node:http parses again the head the client sent:
 * - node:http keeps only so many fields in `rawHeaders` (1,023 on Node 20 by default,
 *   fewer with `maxHeadersCount`) but framed the request with all of them: a head written
 *   from a truncated list could lose its `Content-Length` and turn the body into a second
 *   request (smuggling). A request with REFEED_MAX_FIELDS fields or more (or as many as
 *   `maxHeadersCount`) is refused 400 and its connection closed.
 * - a request pipelined behind one whose response is still being written waits for that
 *   response to finish: node:http attaches a new connection's responses to a socket only
 *   when none is in flight, and would otherwise hold the new one forever.
 */
import { IncomingMessage, ServerResponse, STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { noteRawAnswer, requestIdFor, requestIdOf, wasRouted } from './finalize';
import { versionRefusal } from './framing';
import { TOKEN_CHARS } from './mediaType';
import { PROBLEM_MEDIA_TYPE, refusal, type ProblemCode, type Refusal } from './problem';
import { problemText } from './respond';

/** A WebSocket opening handshake (RFC 6455 4.1): a GET whose `Upgrade` is `websocket`. Anything else ignores its `Upgrade`. */
export function isWebSocketHandshake(req: IncomingMessage): boolean {
  return req.method === 'GET' && req.headers.upgrade?.trim().toLowerCase() === 'websocket';
}

/**
 * A refusal written on a raw socket, where there is no ServerResponse: an upgrade, or a
 * request node:http could not parse (`req` undefined: the id is a fresh one): the same problem+json bytes as every other refusal (respond.ts `problemText`),
 * with the request id every answer carries (`headOnly`: a HEAD's, without the body); then the connection closes (destroyed once
 * the answer is flushed, as ws does, so a client that never closes holds no socket).
 * Returns the request id it wrote (for the answer's log line).
 */
export function writeRefusal(req: IncomingMessage | undefined, socket: Duplex, r: Refusal, headOnly = false): string {
  const json = problemText(r);
  const id = req ? requestIdOf(req) : requestIdFor(undefined);
  const lines = [
    // The reason phrase node writes for the status on every other answer (the problem's title is the body's).
    `HTTP/1.1 ${r.problem.status} ${STATUS_CODES[r.problem.status] ?? r.problem.title}`,
    `X-Request-Id: ${id}`,
    `Date: ${new Date().toUTCString()}`, // RFC 9110 6.6.1: an origin with a clock MUST send it
    `Content-Type: ${PROBLEM_MEDIA_TYPE}`,
    `Content-Length: ${Buffer.byteLength(json)}`,
    'Connection: close',
  ];
  for (const [k, v] of Object.entries(r.headers ?? {})) if (k.toLowerCase() !== 'connection') lines.push(`${k}: ${v}`);
  socket.once('finish', () => socket.destroy());
  // A HEAD's answer is the head alone, with the length the body would have (RFC 9110 9.3.2).
  socket.end(`${lines.join('\r\n')}\r\n\r\n${headOnly ? '' : json}`);
  return id;
}

/** Connection options that only name the upgrade: dropped with it. */
const UPGRADE_ONLY = /^(?:upgrade|http2-settings)$/i;

/** Header fields a re-fed request may have: far below where node:http starts dropping them, far above what clients send. */
export const REFEED_MAX_FIELDS = 500;

/**
 * Serves `req` as an ordinary request on `server` (see above). Header values are written
 * back in latin1, the encoding node:http read them in, so they reach the parser byte for
 * byte.
 */
export function ignoreUpgrade(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const raw = req.rawHeaders;
  const max = Math.min(REFEED_MAX_FIELDS, server.maxHeadersCount || REFEED_MAX_FIELDS);
  if (raw.length >= 2 * max) return void writeRefusal(req, socket, refusal('BAD_REQUEST', `A request with Upgrade may carry fewer than ${max} header fields`));
  const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/${req.httpVersion}`];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (name === 'upgrade' || name === 'http2-settings') continue;
    if (name === 'connection') {
      const kept = raw[i + 1]
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== '' && !UPGRADE_ONLY.test(t));
      if (kept.length > 0) lines.push(`${raw[i]}: ${kept.join(', ')}`);
      continue;
    }
    lines.push(`${raw[i]}: ${raw[i + 1]}`);
  }
  // Refed once the answers to the requests pipelined ahead of it are sent: a new parser on
  // this socket must not begin while node is still writing one of them.
  afterPendingResponses(socket, () => {
    socket.unshift(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]));
    server.emit('connection', socket);
  });
}

/**
 * node:http's response on this connection, if it carries one now (the one being prepared or
 * sent; a pipelined request's response is handed the socket when the one ahead finishes).
 * node keeps it on the socket as `_httpMessage`, which no public API exposes.
 */
export function responseOn(socket: Duplex): ServerResponse | undefined {
  const res: unknown = Reflect.get(socket, '_httpMessage');
  return res instanceof ServerResponse ? res : undefined;
}

/** node:http's parse errors: the status node answers each with (its own body-less default), else 400. */
const CLIENT_ERROR_STATUS: Readonly<Record<string, ProblemCode>> = {
  HPE_HEADER_OVERFLOW: 'HEADER_FIELDS_TOO_LARGE',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'PAYLOAD_TOO_LARGE',
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
};

/** A request line well formed but for its version: method, target, `HTTP/d.d`, CRLF. */
const VERSIONED_LINE = /^[!-~]+ [!-~]+ HTTP\/(\d+\.\d+)\r$/;

/**
 * The version of node's HPE_INVALID_VERSION when it is one this server does not speak
 * (`HTTP/3.0`, `HTTP/1.2`: 505, as framing.ts answers the versions node does parse, 0.9 and
 * 2.0; RFC 9110 2.5 would serve HTTP/1.2 as 1.1, but node cannot parse it), or undefined for
 * a request line broken after its version (a bare LF, a space before the CRLF), which node
 * reports under the same code and is 400 like any malformed request. `raw` is the chunk
 * node failed in, `at` the bytes it had parsed of it: the line judged is the one holding
 * the last byte parsed.
 */
function unspokenVersion(raw: unknown, at: unknown): string | undefined {
  if (!Buffer.isBuffer(raw) || typeof at !== 'number' || at < 1) return undefined;
  const last = Math.min(at, raw.length) - 1;
  const start = last === 0 ? 0 : raw.lastIndexOf(0x0a, last - 1) + 1;
  const end = raw.indexOf(0x0a, last);
  const version = VERSIONED_LINE.exec(raw.subarray(start, end < 0 ? raw.length : end).toString('latin1'))?.[1];
  return version !== '1.1' && version !== '1.0' ? version : undefined;
}

/** A request line well formed but for a method node does not know: a token (RFC 9110 5.6.2), target, `HTTP/1.x`, CRLF. */
const TOKEN_BYTE = new RegExp(`^${TOKEN_CHARS}$`);
const TOKEN_METHOD_LINE = new RegExp(`^(${TOKEN_CHARS}+) ([!-~]+) HTTP/1\\.[01]\r$`);

/**
 * The method of node's HPE_INVALID_METHOD when it is a well-formed method this server does
 * not know (`FOO`, `get`: methods are case-sensitive): 501, RFC 9110 9.1 (a method node knows
 * but the path does not serve is the pipeline's 405). Undefined when the request line is not
 * well formed at all (a byte outside the token set, no version): 400. `raw` and `at` as for
 * unspokenVersion; node fails inside the method, so the request line begins at the first of the
 * token bytes before `at` (behind a body that ends without a newline, the method follows its last byte).
 */
function unknownMethod(raw: unknown, at: unknown): UnparsedLine | undefined {
  if (!Buffer.isBuffer(raw) || typeof at !== 'number' || at < 0 || at >= raw.length) return undefined;
  let start = at;
  while (start > 0 && TOKEN_BYTE.test(String.fromCharCode(raw[start - 1]))) start--;
  const end = raw.indexOf(0x0a, at);
  const line = TOKEN_METHOD_LINE.exec(raw.subarray(start, end < 0 ? raw.length : end).toString('latin1'));
  return line ? { method: line[1], target: line[2] } : undefined;
}

/**
 * Runs `then` once every response to the requests read before the broken one has been
 * sent: pipelined requests are answered in the order received (RFC 9112 9.3.2), so a
 * valid request ahead of the broken one gets its own answer (a create its 201) before the
 * refusal, rather than losing it to the refusal's close. node hands the connection's next
 * queued response to the socket when one finishes ('finish' runs node's listener first),
 * so each finish looks again. A connection that closes meanwhile gets nothing more. A
 * WebSocket handshake pipelined behind other requests waits the same way (realtime/index.ts):
 * its 101 must not come before their answers.
 */
export function afterPendingResponses(socket: Duplex, then: (broken?: IncomingMessage) => void): void {
  const inFlight = responseOn(socket);
  if (inFlight instanceof ServerResponse && !(inFlight.req instanceof IncomingMessage && inFlight.req.complete)) {
    // The broken request's own answer (its body broke after its head was routed). Begun, it
    // is the answer, and the connection ends behind it; not begun, the refusal replaces it
    // (what its route waits for will not come). Never a second answer to one request. The
    // refusal is that request's answer: it carries the request's id, as its log line does.
    if (!inFlight.headersSent) return socket.writable ? then(inFlight.req instanceof IncomingMessage ? inFlight.req : undefined) : void socket.destroy();
    if (inFlight.writableFinished) return void socket.end();
    inFlight.once('finish', () => socket.end());
    inFlight.once('close', () => socket.destroy());
    return;
  }
  if (!(inFlight instanceof ServerResponse) || inFlight.writableFinished) {
    if (socket.writable) then();
    else socket.destroy();
    return;
  }
  const next = () => {
    inFlight.off('close', gone);
    afterPendingResponses(socket, then);
  };
  const gone = () => {
    inFlight.off('finish', next);
    socket.destroy();
  };
  inFlight.once('finish', next);
  inFlight.once('close', gone);
}

/** Connections whose parser has failed: answered (or closed) once. */
const broken = new WeakSet<Duplex>();

/** A request line node could not read for its method, as sent (a method it does not know: `FOO`, `get`). */
export interface UnparsedLine {
  method: string;
  target: string;
}

/**
 * Told of each answer written here (for its log line and metric: Finalizer.rawAnswer), with its
 * route when it has one, and, for a request node read no request of, its request line when it is
 * well formed (an unknown method), so the log names its method and path.
 */
export type RawAnswerLog = (req: IncomingMessage | undefined, status: number, id: string, route?: string, line?: UnparsedLine) => void;

/**
 * Requests node:http cannot parse (an unknown method, bad framing: a malformed chunk
 * size, two Content-Lengths, Content-Length with Transfer-Encoding; a head over node's
 * size limit; a request not sent in time) are answered as every other refusal is, as
 * problem+json with a request id, instead of node's body-less `400 Bad Request`. The
 * rest mirrors node's own handler: an answer only while no response has begun on the
 * connection (a request whose body broke after its head was routed has its answer
 * pending; it is not sent), and the connection closes, since what follows cannot be framed.
 */
export function answerClientErrors(server: Server, log: RawAnswerLog = () => undefined): void {
  // A routed request whose body broke is logged by its own exchange (its route answers too, unheard): not twice.
  const answer = (req: IncomingMessage | undefined, socket: Duplex, r: Refusal, headOnly = false, line?: UnparsedLine) => {
    const id = writeRefusal(req, socket, r, headOnly);
    if (!req || !wasRouted(req)) log(req, r.problem.status, id, undefined, req ? undefined : line);
    else noteRawAnswer(req, r.problem.status); // its exchange logs what was sent
  };
  // CONNECT asks for a tunnel, which only a proxy opens: node:http hands it to 'connect' and,
  // with no listener, closes the connection without a word. It is the client's error here.
  // In its turn, as every refusal here: behind the answers owed to requests pipelined ahead of it (a create's 201 is not lost to it).
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    afterPendingResponses(socket, () => answer(req, socket, refusal('BAD_REQUEST', 'CONNECT opens a tunnel through a proxy: this server is not one')));
  });
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    // Once node's parser has failed, every later chunk on the connection fails it again: the first decides.
    if (broken.has(socket)) return;
    broken.add(socket);
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // Bytes after a request that closes the connection (`Connection: close`, HTTP/1.0, or a
    // refusal that closes it): no request to answer. They are dropped unread and the
    // connection ends after the answers owed (RFC 9112 9.6: no further request is processed).
    if (err.code === 'HPE_CLOSED_CONNECTION') return afterPendingResponses(socket, () => socket.end());
    const raw: unknown = Reflect.get(err, 'rawPacket');
    // HPE_PAUSED_H2_UPGRADE: the HTTP/2 connection preface (`PRI * HTTP/2.0`, a client with prior knowledge, RFC 9113 3.4).
    const version = err.code === 'HPE_INVALID_VERSION' ? unspokenVersion(raw, Reflect.get(err, 'bytesParsed')) : err.code === 'HPE_PAUSED_H2_UPGRADE' ? '2.0' : undefined;
    const method = err.code === 'HPE_INVALID_METHOD' ? unknownMethod(raw, Reflect.get(err, 'bytesParsed')) : undefined;
    const known = err.code === undefined ? undefined : CLIENT_ERROR_STATUS[err.code];
    const refused =
      version !== undefined
        ? versionRefusal(version)
        : method !== undefined
          ? refusal('NOT_IMPLEMENTED', `${method.method.slice(0, 32)} is not a method this server implements`)
          : known !== undefined
            ? refusal(known)
            : refusal('BAD_REQUEST', `The request is not well-formed HTTP/1.1 (${err.code ?? 'unparsable'})`);
    // The bytes node failed on, when they begin a HEAD request: its answer has no body. They
    // begin the broken request only when none was read before it (`rawPacket` is the whole
    // chunk); behind others, the answer keeps its body, which the close delimits anyway.
    const first = responseOn(socket) === undefined;
    const head = first && Buffer.isBuffer(raw) && raw.subarray(0, 5).toString('latin1') === 'HEAD ';
    afterPendingResponses(socket, (req) => answer(req, socket, refused, head, method));
  });
}
