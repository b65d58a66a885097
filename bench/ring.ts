/**
 * `npx tsx bench/ring.ts`: the replay ring answers a short replay in O(k) whatever its
 * capacity (src/realtime/ring.ts). Measured, not asserted in a unit test: the time per
 * `after()` call for the last 5 frames of a 1,000,000-slot ring holding 200,000 frames,
 * against the same call on a 16-slot ring, in the same run. A ratio near 1 means no scan;
 * a scan of 200k slots would make it hundreds of times slower.
 */
import { ReplayRing } from '../src/realtime/ring';
import type { Frame } from '../src/realtime/frames';

const frame = (seq: number): Frame => ({ seq, type: 'order.updated', json: '{}', sse: Buffer.alloc(0), sseChunk: Buffer.alloc(0), ws: Buffer.alloc(0) });
const CALLS = Number(process.env.BENCH_RING_CALLS ?? 200_000);

function perCallNs(capacity: number, filled: number): number {
  const ring = new ReplayRing(capacity);
  for (let s = 1; s <= filled; s++) ring.push(frame(s));
  const since = filled - 5;
  for (let i = 0; i < 10_000; i++) ring.after(since); // warm-up
  const t = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) ring.after(since);
  return Number(process.hrtime.bigint() - t) / CALLS;
}

const small: number[] = [];
const large: number[] = [];
for (let round = 0; round < 3; round++) {
  small.push(perCallNs(16, 16));
  large.push(perCallNs(1_000_000, 200_000));
}
const best = (xs: number[]) => Math.min(...xs);
console.log(
  `ring replay of 5 frames: 1M-slot ring ${best(large).toFixed(0)} ns/call, 16-slot ring ${best(small).toFixed(0)} ns/call, ratio ${(best(large) / best(small)).toFixed(2)} (best of 3 rounds, ${CALLS} calls each)`,
);
