/**
 * Graceful shutdown of one HTTP server that resets no request:
 *
 * 1. stop accepting connections (the listening socket closes; connections already open
 *    stay open, idle keep-alive ones included: closing those at once would reset a
 *    request a client is sending on one at that moment, which is what node:http's own
 *    `server.close()` does since Node 19);
 * 2. every request that arrives from then on, on any connection, is answered 503
 *    problem+json with `Retry-After` and `Connection: close` (the client retries,
 *    elsewhere or later), through the finalizer every answer goes through (its request id,
 *    CORS fields, log line and metric: a browser app can read the 503 and its Retry-After);
 *    responses still being prepared carry `Connection: close`, so each connection ends
 *    after its last answer;
 * 3. the caller closes its streams (SSE `retry:` then end, WebSocket 1001);
 * 4. resolves once every connection has closed; connections still idle after `graceMs`
 *    are closed then (a client that sends on one after that meets what any keep-alive
 *    timeout gives it), and so are those on which no request is being served: one that
 *    never sent anything (a browser's preconnect, a balancer's spare) or only part of a head.
 *    Only a request in flight holds the shutdown.
 *
 * `track(server)` before it serves: the drain knows every connection from its accept.
 */
import { Server as NetServer } from 'node:net';
import { IncomingMessage, ServerResponse, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { refusal, type Refusal } from './problem';
import { sendProblem } from './respond';
import { noteArrival, requestIdOf, splitTarget, type Finalizer } from './finalize';
import { afterPendingResponses, responseOn, writeRefusal } from './upgrade';

/** Seconds a client refused during shutdown is told to wait (another instance usually answers at once). */
export const SHUTDOWN_RETRY_AFTER_S = 1;
/** How long idle keep-alive connections are left open for a request already on its way. */
export const DRAIN_GRACE_MS = 2000;

/** What every request and new stream connection is told once the shutdown has begun. */
export function shuttingDown(): Refusal {
  return refusal('SERVICE_UNAVAILABLE', 'The server is shutting down: retry', { 'Retry-After': String(SHUTDOWN_RETRY_AFTER_S) });
}

/** The answer to a request that arrives once the drain has begun: shuttingDown(), and the connection closes. */
function goingAway(): Refusal {
  const r = shuttingDown();
  return { ...r, headers: { ...r.headers, Connection: 'close' } };
}

export class Drain {
  private draining = false;
  /**
   * The open connections, from their accept (`track`): when draining begins, the response
   * each is preparing is told `Connection: close`, and at the grace those serving nothing are
   * closed. Kept per connection, not per response: a keep-alive connection carries many
   * requests, and a `close` listener on every response (a wrapper added and removed per
   * request) was a visible share of a cached query's CPU profile.
   */
  private readonly connections = new Set<Socket>();

  /** Watches `server`'s connections from their accept; returns it. */
  track(server: Server): Server {
    server.on('connection', (socket: Socket) => {
      this.connections.add(socket);
      socket.once('close', () => this.connections.delete(socket));
    });
    return server;
  }

  constructor(
    private readonly next: RequestListener,
    private readonly fin: Finalizer,
  ) {}

  /** The server's request listener: the service's until draining begins, then the 503. */
  readonly listener: RequestListener = (req, res) => {
    if (this.draining) return this.goAway(req, res);
    this.next(req, res);
  };

  private goAway(req: IncomingMessage, res: ServerResponse): void {
    const [path, search] = splitTarget(req.url ?? '/');
    const x = this.fin.begin(req, res, path, search);
    this.fin.end(x, sendProblem(this.fin, x, goingAway()));
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /**
   * What the drain still waits for: the open connections, and the request ids of the
   * responses being prepared on them (at most `max`): logged when the shutdown gives up on
   * them (main.ts), so the log says which requests the forced exit cut.
   */
  inFlight(max = 20): { connections: number; requests: string[] } {
    const requests: string[] = [];
    for (const socket of this.connections) {
      const res = responseOn(socket);
      if (requests.length < max && res?.req instanceof IncomingMessage) requests.push(requestIdOf(res.req));
    }
    return { connections: this.connections.size, requests };
  }

  /** The requests whose answer is not yet sent, event streams included: one per connection that has a response under way (pipelined ones wait behind it). */
  answering(): number {
    let n = 0;
    for (const socket of this.connections) if (responseOn(socket)) n++;
    return n;
  }

  /** What the listener's scrape-time gauges read (Metrics.watch): its open connections, and the requests being answered on them. */
  gauges(): { connections: () => number; requests: () => number } {
    return { connections: () => this.connections.size, requests: () => this.answering() };
  }

  /**
   * Begins the shutdown of `server` (steps 1, 2 and 4 above); `closeStreams` runs once
   * nothing new is accepted. Resolves when every connection has closed.
   */
  drain(server: Server, closeStreams: () => void, graceMs = DRAIN_GRACE_MS): Promise<void> {
    this.draining = true;
    const closed = new Promise<void>((resolve) => {
      // net.Server's close: stop listening, leave open connections alone (http.Server's would close idle ones now).
      NetServer.prototype.close.call(server, () => resolve());
    });
    for (const socket of this.connections) {
      const res = responseOn(socket);
      if (res && !res.headersSent) res.setHeader('Connection', 'close');
    }
    // An upgrade that arrives on a connection still open: refused as a request is, in its
    // turn (behind the answers owed to the requests pipelined ahead of it, which it would cut off).
    server.removeAllListeners('upgrade');
    server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
      noteArrival(req);
      const r = goingAway();
      afterPendingResponses(socket, () => this.fin.rawAnswer(req, r.problem.status, writeRefusal(req, socket, r)));
    });
    closeStreams();
    const idle = setTimeout(() => {
      server.closeIdleConnections();
      // Connections serving no request: nothing sent yet, or part of a head (node's idle list has neither).
      for (const socket of this.connections) if (!responseOn(socket)) socket.destroy();
    }, graceMs);
    idle.unref();
    return closed.finally(() => clearTimeout(idle));
  }
}
