import fc from 'fast-check';
import { ReplayRing, RingBudget, STORED_EVENT_OVERHEAD_BYTES } from './ring';
import { frameOf, type Frame } from './frames';

const frame = (seq: number, text = String(seq)): Frame => ({
  seq,
  type: 'order.updated',
  json: `{"seq":${seq},"t":"${text}"}`,
  sse: Buffer.from(String(seq)),
  sseChunk: Buffer.from(String(seq)),
  ws: Buffer.from(String(seq)),
});

describe('ReplayRing', () => {
  it('replays exactly the frames after a seq while they are held, else too_old (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 10 }), (cap, n, since, base) => {
        const ring = new ReplayRing(cap);
        ring.resetTo(base);
        for (let s = base + 1; s <= base + n; s++) ring.push(frame(s));
        const last = base + n;
        const oldestHeld = Math.max(base + 1, last - cap + 1);
        const r = ring.after(since);
        if (since >= last) expect(r).toEqual({ kind: 'frames', frames: [] });
        else if (since + 1 < oldestHeld) expect(r).toEqual({ kind: 'too_old' });
        else {
          expect(r.kind).toBe('frames');
          const seqs = r.kind === 'frames' ? r.frames.map((f) => f.seq) : [];
          expect(seqs).toEqual(Array.from({ length: last - since }, (_, i) => since + 1 + i));
        }
      }),
    );
  });

  it('refuses a frame that is not the next seq (the hub must close gaps first)', () => {
    const ring = new ReplayRing(3);
    ring.push(frame(1));
    expect(() => ring.push(frame(3))).toThrow(RangeError);
    expect(() => ring.push(frame(1))).toThrow(RangeError);
  });
  it('keeps what a replay needs and frames it again: the same bytes as the live frame, on both transports', () => {
    const ring = new ReplayRing(4);
    const live = frameOf({ type: 'order.updated', channel: 'order:9', seq: 1, status: 'paid', order: { id: 9 } } as never);
    ring.push(live);
    const r = ring.after(0);
    if (r.kind !== 'frames') throw new Error('expected frames');
    expect(r.frames[0].sse.equals(live.sse)).toBe(true);
    expect(r.frames[0].ws.equals(live.ws)).toBe(true);
    expect(ring.bytes).toBe(STORED_EVENT_OVERHEAD_BYTES + live.json.length);
  });

  // How long a replay takes (O(k) whatever the capacity) is measured in bench/ring.ts, not asserted here.
});

describe('RingBudget (REPLAY_MAX_BYTES)', () => {
  /** Pushes seqs 1..n of one size into a ring. */
  const fill = (ring: ReplayRing, n: number, text: string) => {
    const from = ring.lastSeq;
    for (let s = from + 1; s <= from + n; s++) ring.push(frame(s, text));
  };

  it('bounds the bytes of all rings together; the largest rings lose their oldest events first', () => {
    const one = STORED_EVENT_OVERHEAD_BYTES + frame(1, 'x'.repeat(100)).json.length;
    const budget = new RingBudget(30 * one);
    const big = new ReplayRing(100, budget);
    const small = new ReplayRing(100, budget);
    fill(small, 5, 'x'.repeat(100));
    fill(big, 40, 'x'.repeat(100)); // 45 events: over the bound
    expect(budget.used).toBeLessThanOrEqual(30 * one);
    expect(budget.used).toBe(big.bytes + small.bytes);
    expect(small.size).toBe(5); // the small ring kept everything
    expect(big.oldestSeq).toBeGreaterThan(1); // the big one lost its oldest
    expect(big.lastSeq).toBe(40);
    expect(big.after(0)).toEqual({ kind: 'too_old' }); // a resume into what was dropped resyncs
    const kept = big.after(big.oldestSeq - 1);
    expect(kept.kind === 'frames' && kept.frames.map((f) => f.seq)).toEqual(Array.from({ length: big.size }, (_, i) => big.oldestSeq + i));
  });

  it('never exceeds the bound, and answers every resume with the frames after it or too_old, never a gap (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 300 })), { maxLength: 200 }), fc.integer({ min: 0, max: 100 }), (events, pushes, since) => {
        const budget = new RingBudget(events * (STORED_EVENT_OVERHEAD_BYTES + 50));
        const rings = Array.from({ length: 5 }, () => new ReplayRing(20, budget));
        for (const [i, len] of pushes) rings[i].push(frame(rings[i].lastSeq + 1, 'y'.repeat(len)));
        expect(budget.used).toBeLessThanOrEqual(budget.maxBytes);
        expect(budget.used).toBe(rings.reduce((n, r) => n + r.bytes, 0));
        for (const ring of rings) {
          const r = ring.after(since);
          if (r.kind === 'frames') expect(r.frames.map((f) => f.seq)).toEqual(Array.from({ length: Math.max(0, ring.lastSeq - since) }, (_, k) => since + 1 + k));
          else expect(since + 1).toBeLessThan(ring.oldestSeq);
        }
      }),
    );
  });

  it('gives the bytes of a disposed ring back, and counts nothing pushed into it afterwards', () => {
    const budget = new RingBudget(1 << 20);
    const ring = new ReplayRing(10, budget);
    fill(ring, 3, 'z');
    expect(budget.used).toBe(ring.bytes);
    ring.dispose();
    expect(budget.used).toBe(0);
    ring.push(frame(ring.lastSeq + 1));
    expect(budget.used).toBe(0);
  });
});
