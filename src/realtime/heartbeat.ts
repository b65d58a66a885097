/**
 * WebSocket liveness: every `WS_HEARTBEAT_S` each open connection, whatever its protocol
 * (/orders, graphql-transport-ws on /graphql), is sent a ping frame; one that has not
 * answered the previous ping with a pong by the next round is cut (no close frame: the
 * peer is gone or unreachable, so a closing handshake would only wait). Without it a
 * client that vanished without a FIN (a laptop closed, a NAT entry expired, a mobile
 * network gone) would hold its connection and its subscriptions for ever on a quiet topic,
 * since nothing is written to it that could fail. Pings also keep proxies that close idle
 * connections (nginx: 60 s by default) from cutting a quiet subscription.
 *
 * Every WebSocket client answers pings by itself (RFC 6455 5.5.2; browsers, `ws`, Node 22's
 * WebSocket), so nothing is asked of client code. A client that is alive but does not read
 * (its pong waits behind what it has not read) looks the same and is cut too: it resumes
 * from its last seq when it reconnects. A connection whose reading the server has paused
 * (its messages wait their turn: ws.ts) cannot deliver a pong, so it is not judged in that round.
 *
 * One sweep for every connection, not a timer each (the ws README's pattern); `beat()`
 * runs a round at once, for tests.
 */
import { WebSocket } from 'ws';

export class WsHeartbeat {
  /** Connections sent a ping that has not been answered yet. */
  private readonly unanswered = new WeakSet<WebSocket>();
  private readonly timer: NodeJS.Timeout | undefined;

  /**
   * @param clients the open connections of every path, read at each round
   * @param intervalMs 0: no timer (rounds only through `beat()`)
   * @param onTimeout told of each connection cut for a missing pong
   */
  constructor(
    private readonly clients: () => Iterable<WebSocket>,
    intervalMs: number,
    private readonly onTimeout?: () => void,
  ) {
    if (intervalMs > 0) {
      this.timer = setInterval(() => this.beat(), intervalMs);
      this.timer.unref();
    }
  }

  /** A new connection: its pongs mark it alive. */
  watch(ws: WebSocket): void {
    ws.on('pong', () => this.unanswered.delete(ws));
  }

  /** One round: cut who did not answer the last ping, ping the rest. */
  beat(): void {
    for (const ws of this.clients()) {
      if (ws.readyState !== WebSocket.OPEN || ws.isPaused) continue;
      if (this.unanswered.has(ws)) {
        this.onTimeout?.();
        ws.terminate();
        continue;
      }
      this.unanswered.add(ws);
      ws.ping();
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
