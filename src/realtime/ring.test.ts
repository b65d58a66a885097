import fc from 'fast-check';
import { ReplayRing } from './ring';
import type { Frame } from './frames';

const frame = (seq: number): Frame => ({ seq, sse: Buffer.from(String(seq)), ws: Buffer.from(String(seq)) });

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
  // How long a replay takes (O(k) whatever the capacity) is measured in bench/ring.ts, not asserted here.
});
