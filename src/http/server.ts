/**
 * The service's http.Server, one setup for a lone process, a cluster worker and the tests:
 * what node:http would answer by itself (a request it cannot parse, a CONNECT, `Expect`,
 * a missing `Host`) is answered as every other refusal is, as problem+json with a request id.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
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

export function createHttpServer(listener: RequestListener, bodyLimitBytes: number, { requestTimeoutMs }: RequestTimeouts = { requestTimeoutMs: 30_000 }, log?: RawAnswerLog): Server {
  // node's own Host check answers a bare 400; the pipeline's (framing.ts) answers it as a problem.
  const server = createServer(
    { requireHostHeader: false, maxHeaderSize: PARSER_HEAD_BYTES, requestTimeout: requestTimeoutMs, headersTimeout: Math.min(requestTimeoutMs, 20_000), connectionsCheckingInterval: CHECK_INTERVAL_MS },
    listener,
  );
  answerClientErrors(server, log);
  answerExpectations(server, bodyLimitBytes);
  return server;
}
