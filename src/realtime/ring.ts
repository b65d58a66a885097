/**
 * The replay ring of one topic: the last `capacity` events, in seq order. Seqs in a
 * topic are gap-free, so the event of seq s sits at a fixed offset from the oldest
 * one: replaying the k events after a seq is O(k), whatever the capacity.
 *
 * What a ring keeps of an event is what a replay needs: its seq, type and JSON text.
 * The prepared wire forms (frames.ts) are for live delivery, where one event goes to
 * many sockets; a replay goes to one subscriber and frames again (`ReplayedFrame`).
 *
 * Rings may share a `RingBudget`: a bound on the bytes all of them hold together
 * (REPLAY_MAX_BYTES) besides each one's length. Over it, the oldest events of the
 * largest rings go first; a resume older than what a ring still holds is told to
 * resync (`too_old`), exactly as one beyond its length is: never a silent gap.
 */
import { ReplayedFrame, type Frame } from './frames';

export type Replay = { kind: 'frames'; frames: Frame[] } | { kind: 'too_old' };

/** What a ring keeps of one event. */
interface Stored {
  seq: number;
  type: string;
  json: string;
  bytes: number;
}

/**
 * Bytes counted for one stored event besides its text: the entry object, its slot and
 * the string's header (measured with bench/ring-memory.ts, rounded up).
 */
export const STORED_EVENT_OVERHEAD_BYTES = 100;
/** Text beyond Latin-1 is held by V8 two bytes per UTF-16 unit. */
const WIDE = /[\u0100-\uffff]/;
const storedBytes = (json: string): number => STORED_EVENT_OVERHEAD_BYTES + (WIDE.test(json) ? 2 : 1) * json.length;

export class ReplayRing {
  /**
   * Grown as events come, up to `capacity` (then used as a circle): a ring that holds few
   * events holds few slots. Allocated whole, 30,000 slots (REPLAY_RATE 100 x REPLAY_WINDOW_S
   * 300) took 240 KB per watched topic, which REPLAY_MAX_BYTES, counting events, never saw.
   * A write lands at most one past the end: until the ring first fills, `start + count` is
   * the number of events pushed since the last reset, which is the array's length.
   */
  private readonly slots: (Stored | undefined)[] = [];
  private start = 0; // index of the oldest event
  private count = 0;
  /** Bytes this ring holds (counted as `storedBytes`), shared with its budget. */
  bytes = 0;

  constructor(
    readonly capacity: number,
    private budget?: RingBudget,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('ring capacity must be a positive integer');
    budget?.add(this);
  }

  /** Seq of the newest event, or `base` when empty (the seq the topic stood at when loaded). */
  lastSeq = 0;

  get oldestSeq(): number {
    return this.count === 0 ? this.lastSeq + 1 : this.lastSeq - this.count + 1;
  }

  get size(): number {
    return this.count;
  }

  /** Appends the next event; its seq must be lastSeq + 1 (the hub guarantees it). */
  push(frame: Frame): void {
    if (frame.seq !== this.lastSeq + 1) throw new RangeError(`ring: expected seq ${this.lastSeq + 1}, got ${frame.seq}`);
    if (this.count === this.capacity) {
      const freed = this.dropOldest();
      this.budget?.shrank(freed);
    }
    const stored: Stored = { seq: frame.seq, type: frame.type, json: frame.json, bytes: storedBytes(frame.json) };
    this.slots[(this.start + this.count) % this.capacity] = stored;
    this.count++;
    this.bytes += stored.bytes;
    this.lastSeq = frame.seq;
    this.budget?.grew(stored.bytes);
  }

  private dropOldest(): number {
    const oldest = this.slots[this.start]!;
    this.slots[this.start] = undefined;
    this.start = (this.start + 1) % this.capacity;
    this.count--;
    this.bytes -= oldest.bytes;
    return oldest.bytes;
  }

  /** Drops the oldest events until this ring holds at most `bytes` (the budget's eviction); returns the bytes freed. */
  shrinkTo(bytes: number): number {
    let freed = 0;
    while (this.count > 0 && this.bytes > bytes) freed += this.dropOldest();
    return freed;
  }

  /** Starts an empty ring at a seq (the topic's current seq, nothing older kept). */
  resetTo(seq: number): void {
    this.budget?.shrank(this.bytes);
    this.slots.length = 0;
    this.start = 0;
    this.count = 0;
    this.bytes = 0;
    this.lastSeq = seq;
  }

  /** The topic is gone: its bytes go back to the budget, which forgets it (a step still queued for it counts nothing). */
  dispose(): void {
    this.resetTo(this.lastSeq);
    this.budget?.remove(this);
    this.budget = undefined;
  }

  /** Every event with seq > `since`, or too_old when some of them are no longer held. */
  after(since: number): Replay {
    if (since >= this.lastSeq) return { kind: 'frames', frames: [] };
    if (since + 1 < this.oldestSeq) return { kind: 'too_old' };
    const skip = since + 1 - this.oldestSeq;
    const frames: Frame[] = new Array<Frame>(this.count - skip);
    for (let i = skip; i < this.count; i++) {
      const s = this.slots[(this.start + i) % this.capacity]!;
      frames[i - skip] = new ReplayedFrame(s.seq, s.type, s.json);
    }
    return { kind: 'frames', frames };
  }
}

/**
 * The bytes every ring of a hub may hold together (REPLAY_MAX_BYTES). When a push takes
 * the total over the bound, the rings are cut down to one level, largest first (a
 * water level: every ring above it drops its oldest events down to it, the others keep
 * theirs), until the total is `SHED_FRACTION` under the bound, so a steady stream of
 * pushes sheds in rounds rather than on every push. A ring cut this way answers an older
 * resume with `too_old` (resync).
 */
export class RingBudget {
  private readonly rings = new Set<ReplayRing>();
  /** Bytes all rings hold. */
  used = 0;
  /** Rounds of eviction so far (metrics, tests). */
  sheds = 0;

  constructor(readonly maxBytes: number) {
    if (!Number.isFinite(maxBytes) || maxBytes < 1) throw new RangeError('ring budget must be a positive number of bytes');
  }

  /** Shed down to this fraction under the bound. */
  static readonly SHED_FRACTION = 1 / 16;

  add(ring: ReplayRing): void {
    this.rings.add(ring);
  }

  remove(ring: ReplayRing): void {
    this.rings.delete(ring);
  }

  grew(bytes: number): void {
    this.used += bytes;
    if (this.used > this.maxBytes) this.shed();
  }

  shrank(bytes: number): void {
    this.used -= bytes;
  }

  private shed(): void {
    this.sheds++;
    const target = this.maxBytes * (1 - RingBudget.SHED_FRACTION);
    let excess = this.used - target;
    const bySize = [...this.rings].filter((r) => r.bytes > 0).sort((a, b) => b.bytes - a.bytes);
    // The level L with sum(max(0, bytes - L)) = excess: walk down the sizes until the top k can give it.
    let level = 0;
    let top = 0;
    for (let k = 1; k <= bySize.length; k++) {
      top += bySize[k - 1].bytes;
      const candidate = (top - excess) / k;
      const next = k < bySize.length ? bySize[k].bytes : 0;
      if (candidate >= next) {
        level = Math.max(0, Math.floor(candidate));
        break;
      }
    }
    for (const ring of bySize) {
      if (ring.bytes <= level || excess <= 0) break;
      const freed = ring.shrinkTo(level);
      this.used -= freed;
      excess -= freed;
    }
  }
}
