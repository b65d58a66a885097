/**
 * The per-connection write queue (centrifuge's writer): every server-to-client byte of
 * a stream connection goes through one of these, so at most `maxBytes` of it is held in
 * user space once a turn of the event loop is over, whatever the peer does (within one turn,
 * what that turn writes: a replay, bounded by the ring's byte budget; see `mustWait`).
 *
 * Bytes go straight to the socket while it does not need draining (Node then holds at
 * most its highWaterMark); after that they wait here, and are handed over in one corked
 * batch (one writev) on 'drain'. A write that would take what is held here and in the
 * socket's own buffer over `maxBytes` is a slow consumer: the queue is dropped and the
 * write answers 'slow' (a value, not an exception), so the caller can put its goodbye
 * (close 1013, the end of an SSE response) right behind what the kernel already holds.
 *
 * With a `WriteBatcher` (WRITE_DELAY_MS > 0, centrifuge's write delay) every write waits in
 * the queue, bounded the same way, and the batcher hands all waiting queues over together
 * once per delay, each in one corked batch: a socket that gets several messages within the
 * delay costs one system call for them instead of one each (on loopback a socket write's
 * kernel time is most of the CPU per delivered message), at the price of up to the delay in
 * latency. Off (0) by default: every write goes out at once. A write that would take what
 * waits for the delay over `maxBytes` does not make the connection slow: those bytes wait for
 * the timer, not for the peer, so they go out at once and the write is judged as without a
 * delay (a replay of a few MB to a client that reads was closed 1013 every time it resumed).
 *
 * Why not ws's `send` and its `bufferedAmount`: ws never drops what it has queued, so a
 * close frame sent on overflow waits behind every byte already buffered, and a client
 * that resumes reading finds the socket destroyed before it gets there.
 */
import type { Writable } from 'node:stream';

/** What the writer needs of a socket or an http response. */
export type Sink = Pick<Writable, 'write' | 'writableLength' | 'writableNeedDrain' | 'writableCorked' | 'writableHighWaterMark' | 'cork' | 'uncork' | 'once' | 'writable'>;

export type WriteResult = 'ok' | 'slow' | 'closed';

/**
 * One timer for every connection's delayed writes: writers with bytes waiting join the set,
 * and every `delayMs` (only while any waits) each is flushed. `schedule` is injected by
 * tests (they call `flushAll` themselves).
 */
export class WriteBatcher {
  private readonly waiting = new Set<BoundedWriter>();
  private timer: { unref?(): unknown } | undefined;

  constructor(
    readonly delayMs: number,
    private readonly schedule: (fn: () => void, ms: number) => { unref?(): unknown } = setTimeout,
  ) {}

  add(writer: BoundedWriter): void {
    this.waiting.add(writer);
    if (this.timer) return;
    this.timer = this.schedule(() => this.flushAll(), this.delayMs);
    this.timer.unref?.();
  }

  /** Hands every waiting queue to its socket (one corked batch each). */
  flushAll(): void {
    this.timer = undefined;
    for (const w of this.waiting) w.flushDelayed();
    this.waiting.clear();
  }
}

export class BoundedWriter {
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private waitingForDrain = false;
  private done = false;

  /**
   * `batcher`: delay writes and hand them over in batches (see above). `canFlush`: checked
   * before a delayed batch goes out (a WebSocket that has begun its closing handshake must
   * send no data frame after its close frame).
   */
  constructor(
    private readonly sink: Sink,
    private readonly maxBytes: number,
    private readonly batcher?: WriteBatcher,
    private readonly canFlush?: () => boolean,
  ) {}

  /** Bytes held in user space for this connection: queued here plus the socket's own buffer. */
  get heldBytes(): number {
    return this.queuedBytes + this.sink.writableLength;
  }

  /**
   * Whether bytes must wait for the peer: the socket, not corked, holds its high-water mark or
   * more that the kernel has not taken. Not node's `writableNeedDrain` alone: node raises it on
   * any write that crosses the mark while the socket is corked (node corks a response's socket
   * for the rest of its tick, and a delayed batch is written corked) and lowers it only with the
   * next tick's 'drain', even when uncorking handed every byte to the kernel. A replay written in
   * one turn to a client that reads was judged a slow consumer for it (1013, or the SSE
   * stream's end, on every resume); a peer that does not read still leaves bytes in the socket
   * once the turn is over, and the next write finds them.
   */
  private mustWait(): boolean {
    const sink = this.sink;
    return sink.writableNeedDrain && sink.writableCorked === 0 && sink.writableLength >= sink.writableHighWaterMark;
  }

  /** True once the writer stopped (slow consumer, or `stop`): later writes are ignored. */
  get stopped(): boolean {
    return this.done;
  }

  write(bytes: Buffer): WriteResult {
    // `writable` is false once the socket is destroyed or ended, and reads one object (the
    // writable state), where `destroyed` reads the readable state too: a cache miss per
    // delivery at 10,000 connections.
    if (this.done || !this.sink.writable) return 'closed';
    if (this.batcher && !this.waitingForDrain) {
      if (this.heldBytes + bytes.length <= this.maxBytes) {
        this.queue.push(bytes);
        this.queuedBytes += bytes.length;
        this.batcher.add(this);
        return 'ok';
      }
      // Over the bound while the bytes wait only for the delay: they go now (see above); a
      // connection that may send nothing more (its close frame is out) takes nothing more.
      if (this.canFlush && !this.canFlush()) return 'closed';
      this.flushDelayed();
    }
    if (!this.waitingForDrain && !this.mustWait()) {
      this.sink.write(bytes);
      if (this.mustWait()) this.waitForDrain();
      return 'ok';
    }
    if (this.heldBytes + bytes.length > this.maxBytes) {
      this.stop();
      return 'slow';
    }
    this.queue.push(bytes);
    this.queuedBytes += bytes.length;
    this.waitForDrain();
    return 'ok';
  }

  /** Drops whatever is queued; nothing more is written through this writer. */
  stop(): void {
    this.done = true;
    this.queue = [];
    this.queuedBytes = 0;
  }

  /** The batcher's turn: what waits goes out now (or on 'drain', if the socket needs draining). */
  flushDelayed(): void {
    if (this.waitingForDrain || this.done || !this.sink.writable) return;
    if (this.canFlush && !this.canFlush()) return;
    if (this.mustWait()) return this.waitForDrain();
    this.flush();
  }

  private waitForDrain(): void {
    if (this.waitingForDrain) return;
    this.waitingForDrain = true;
    this.sink.once('drain', () => {
      this.waitingForDrain = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.done || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    this.sink.cork();
    for (const b of batch) this.sink.write(b);
    this.sink.uncork();
    if (this.mustWait()) this.waitForDrain();
  }
}
