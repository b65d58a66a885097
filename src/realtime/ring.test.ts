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

  it('replays k frames in O(k): a 1M-slot ring answers a short replay without scanning', () => {
    const ring = new ReplayRing(1_000_000);
    for (let s = 1; s <= 200_000; s++) ring.push(frame(s));
    const started = process.hrtime.bigint();
    for (let i = 0; i < 10_000; i++) ring.after(199_995);
    const perCallUs = Number(process.hrtime.bigint() - started) / 10_000 / 1000;
    expect(perCallUs).toBeLessThan(50); // a scan of 200k slots would take ~1 ms per call
  });
});
