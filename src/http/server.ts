/**
 * The service's http.Server, one setup for a lone process, a cluster worker and the tests:
 * what node:http would answer by itself (a request it cannot parse, a CONNECT, `Expect`,
 * a missing `Host`) is answered as every other refusal is, as problem+json with a request id.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { answerExpectations } from './body';
import { PARSER_HEAD_BYTES } from './framing';
import { answerClientErrors, type RawAnswerLog } from './upgrade';

/**
 * How long a client has to send a whole request (head and body), and its head, before it is
 * answered 408 and the connection closed (node's defaults are 300 s and 60 s: a client dripping
 * a body held a connection and a routed request for five minutes). The check runs every
 * CHECK_INTERVAL_MS, so a request is cut between the limit and the limit plus that. Streams
 * are not touched: their request is complete once its head is in.
 */
export interface RequestTimeouts {
  requestTimeoutMs: number;
}

/** How often node looks for requests over their time (its default, 30 s, would double a short limit). */
const CHECK_INTERVAL_MS = 1000;

/** Requests one connection may have waiting for their turn (inTurn); one more and the connection is cut. */
export const MAX_WAITING_PER_CONNECTION = 100;

/** Requests waiting for their turn, by connection. */
const waiting = new WeakMap<Socket, number>();
/** Connections cut: each ends once the answer in progress is out (no waiting request runs). */
const cut = new WeakSet<Socket>();

/**
 * Pipelined requests are served one after another, in the order they came, as if each had
 * been sent once the answer before it arrived: a read behind a write sees the write, a
 * retry behind its original is a replay (RFC 9112 9.3.2 allows serving pipelined requests
 * in parallel only when all are safe). node:http gives a request that arrives behind an
 * unfinished answer on its connection a response with no socket, and hands it the socket
 * once every answer before it is sent (its 'socket' event): `listener` runs then, so
 * everything it judges (the shutdown's 503 first) is judged in the request's turn. A
 * request behind an event stream runs when the stream ends; behind an answer that closes
 * the connection, never.
 *
 * A waiting request writes nothing, so node's own brake (it stops reading a connection whose
 * queued answers pass the socket's high-water mark) never engages, and node resumes a socket
 * paused by anyone else as it reads each request: a client pipelining without end behind an
 * answer that does not come (an event stream) would grow the heap without bound. One with
 * more than MAX_WAITING_PER_CONNECTION requests waiting is cut, as a network failure would
 * (no client that waits for its answers sends that many ahead): it reads nothing more, the
 * answer in progress is sent (its request may have written: a create's 201 is not lost), and
 * the connection ends then, before any waiting request runs (behind an event stream, when the
 * stream ends; meanwhile the requests read stay bounded). On a connection that is not pipelined
 * the response has its socket at once: one property read.
 */
/** `onCut`: told of each connection cut (a test waits for it to release the answer in progress). */
export function inTurn(listener: RequestListener, onCut?: () => void): RequestListener {
  return (req, res) => {
    if (res.socket !== null) return listener(req, res);
    const socket = req.socket;
    if (cut.has(socket)) return;
    const n = (waiting.get(socket) ?? 0) + 1;
    if (n > MAX_WAITING_PER_CONNECTION) {
      cut.add(socket);
      socket.pause(); // nothing more is read: the requests held stay as many as were read
      onCut?.();
      return;
    }
    waiting.set(socket, n);
    res.once('socket', () => {
      if (cut.has(socket)) return void socket.destroy();
      waiting.set(socket, (waiting.get(socket) ?? 1) - 1);
      listener(req, res);
    });
  };
}

export function createHttpServer(listener: RequestListener, bodyLimitBytes: number, { requestTimeoutMs }: RequestTimeouts = { requestTimeoutMs: 30_000 }, log?: RawAnswerLog): Server {
  // node's own Host check answers a bare 400; the pipeline's (framing.ts) answers it as a problem.
  const server = createServer(
    { requireHostHeader: false, maxHeaderSize: PARSER_HEAD_BYTES, requestTimeout: requestTimeoutMs, headersTimeout: Math.min(requestTimeoutMs, 20_000), connectionsCheckingInterval: CHECK_INTERVAL_MS },
    inTurn(listener),
  );
  answerClientErrors(server, log);
  answerExpectations(server, bodyLimitBytes);
  return server;
}
