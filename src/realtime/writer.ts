/**
 * The per-connection write queue (centrifuge's writer): every server-to-client byte of
 * a stream connection goes through one of these, so at most `maxBytes` of it is held in
 * user space, whatever the peer does.
 *
 * Bytes go straight to the socket while it does not need draining (Node then holds at
 * most its highWaterMark); after that they wait here, and are handed over in one corked
 * batch (one writev) on 'drain'. A write that would take what is held here and in the
 * socket's own buffer over `maxBytes` is a slow consumer: the queue is dropped and the
 * write answers 'slow' (a value, not an exception), so the caller can put its goodbye
 * (close 1013, the end of an SSE response) right behind what the kernel already holds.
 *
 * Why not ws's `send` and its `bufferedAmount`: ws never drops what it has queued, so a
 * close frame sent on overflow waits behind every byte already buffered, and a client
 * that resumes reading finds the socket destroyed before it gets there (issue 13, 4).
 */
import type { Writable } from 'node:stream';

/** What the writer needs of a socket or an http response. */
export type Sink = Pick<Writable, 'write' | 'writableLength' | 'writableNeedDrain' | 'cork' | 'uncork' | 'once' | 'destroyed' | 'writableEnded'>;

export type WriteResult = 'ok' | 'slow' | 'closed';

export class BoundedWriter {
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private waitingForDrain = false;
  private done = false;

  constructor(
    private readonly sink: Sink,
    private readonly maxBytes: number,
  ) {}

  /** Bytes held in user space for this connection: queued here plus the socket's own buffer. */
  get heldBytes(): number {
    return this.queuedBytes + this.sink.writableLength;
  }

  /** True once the writer stopped (slow consumer, or `stop`): later writes are ignored. */
  get stopped(): boolean {
    return this.done;
  }

  write(bytes: Buffer): WriteResult {
    if (this.done || this.sink.destroyed || this.sink.writableEnded) return 'closed';
    if (!this.waitingForDrain && !this.sink.writableNeedDrain) {
      if (!this.sink.write(bytes)) this.waitForDrain();
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
    let ok = true;
    for (const b of batch) ok = this.sink.write(b);
    this.sink.uncork();
    if (!ok || this.sink.writableNeedDrain) this.waitForDrain();
  }
}
