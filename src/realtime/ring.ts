/**
 * The replay ring of one topic: the last `capacity` frames, in seq order. Seqs in a
 * topic are gap-free, so the frame of seq s sits at a fixed offset from the oldest
 * one: replaying the k frames after a seq is O(k), whatever the capacity.
 */
import type { Frame } from './frames';

export type Replay = { kind: 'frames'; frames: Frame[] } | { kind: 'too_old' };

export class ReplayRing {
  private readonly slots: (Frame | undefined)[];
  private start = 0; // index of the oldest frame
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('ring capacity must be a positive integer');
    this.slots = new Array<Frame | undefined>(capacity);
  }

  /** Seq of the newest frame, or `base` when empty (the seq the topic stood at when loaded). */
  lastSeq = 0;

  get oldestSeq(): number {
    return this.count === 0 ? this.lastSeq + 1 : this.lastSeq - this.count + 1;
  }

  get size(): number {
    return this.count;
  }

  /** Appends the next frame; its seq must be lastSeq + 1 (the hub guarantees it). */
  push(frame: Frame): void {
    if (frame.seq !== this.lastSeq + 1) throw new RangeError(`ring: expected seq ${this.lastSeq + 1}, got ${frame.seq}`);
    const end = (this.start + this.count) % this.capacity;
    this.slots[end] = frame;
    if (this.count < this.capacity) this.count++;
    else this.start = (this.start + 1) % this.capacity;
    this.lastSeq = frame.seq;
  }

  /** Starts an empty ring at a seq (the topic's current seq, nothing older kept). */
  resetTo(seq: number): void {
    this.slots.fill(undefined);
    this.start = 0;
    this.count = 0;
    this.lastSeq = seq;
  }

  /** Every frame with seq > `since`, or too_old when some of them are no longer held. */
  after(since: number): Replay {
    if (since >= this.lastSeq) return { kind: 'frames', frames: [] };
    if (since + 1 < this.oldestSeq) return { kind: 'too_old' };
    const skip = since + 1 - this.oldestSeq;
    const frames: Frame[] = new Array<Frame>(this.count - skip);
    for (let i = skip; i < this.count; i++) frames[i - skip] = this.slots[(this.start + i) % this.capacity]!;
    return { kind: 'frames', frames };
  }
}
