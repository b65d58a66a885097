/**
 * Connections closed for being slow (WebSocket close 1013, SSE response ended) keep their
 * socket until the peer has read its way to the goodbye: a client that stalls for a
 * minute and then reads must see 1013, not 1006. One that never drains is
 * destroyed once its socket has made no progress for `SLOW_PEER_TIMEOUT_MS`, so
 * thousands of stalled peers cannot hold memory for ever. What such a socket holds is
 * bounded already (the write queue was dropped): this only bounds how long.
 *
 * One sweep for all of them (no timer per connection); the clock is injected so tests
 * can say "two minutes later" without waiting.
 */
import type { Duplex } from 'node:stream';

/** No byte drained for this long after the goodbye: the peer is gone or never reads. */
export const SLOW_PEER_TIMEOUT_MS = 120_000;
const SWEEP_MS = 15_000;

interface Watched {
  held: number;
  progressAt: number;
}

export class SlowPeers {
  private readonly closing = new Map<Duplex, Watched>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly timeoutMs = SLOW_PEER_TIMEOUT_MS,
  ) {
    this.timer = setInterval(() => this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  get size(): number {
    return this.closing.size;
  }

  /** Watches a socket whose goodbye has been written. */
  add(socket: Duplex): void {
    if (socket.destroyed || this.closing.has(socket)) return;
    this.closing.set(socket, { held: socket.writableLength, progressAt: this.now() });
    socket.once('close', () => this.closing.delete(socket));
  }

  /** Destroys the sockets that drained nothing for the timeout (an empty buffer is no progress: the peer may still not read what the kernel holds). */
  sweep(): void {
    const t = this.now();
    for (const [socket, w] of this.closing) {
      const held = socket.writableLength;
      if (held < w.held) {
        w.held = held;
        w.progressAt = t;
      } else if (t - w.progressAt >= this.timeoutMs) {
        this.closing.delete(socket);
        socket.destroy();
      }
    }
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** Shutdown: every socket still watched is destroyed (its peer had its goodbye and the grace). */
  destroyAll(): void {
    for (const socket of this.closing.keys()) socket.destroy();
    this.closing.clear();
  }
}
