/**
 * The service's http.Server, one setup for a lone process, a cluster worker and the tests:
 * what node:http would answer by itself (a request it cannot parse, a CONNECT, `Expect`,
 * a missing `Host`) is answered as every other refusal is, as problem+json with a request id.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import { answerExpectations } from './body';
import { answerClientErrors } from './upgrade';

export function createHttpServer(listener: RequestListener, bodyLimitBytes: number): Server {
  // node's own Host check answers a bare 400; the pipeline's (framing.ts) answers it as a problem.
  const server = createServer({ requireHostHeader: false }, listener);
  answerClientErrors(server);
  answerExpectations(server, bodyLimitBytes);
  return server;
}
