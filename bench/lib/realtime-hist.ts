/**
 * Shared by bench/realtime.ts and its client processes: the latency histogram and the
 * note format that carries the send time inside each event.
 *
 * Times are microseconds of process.hrtime(), i.e. CLOCK_MONOTONIC, which every process on
 * the machine shares: a time taken in the bench process can be subtracted from one taken
 * in a client process.
 */

/** Microseconds on the machine-wide monotonic clock. */
export function nowUs(): number {
  const [s, ns] = process.hrtime();
  return s * 1e6 + Math.floor(ns / 1000);
}

/** Log-scale histogram: ~1% wide buckets from 1 µs to ~10^8 µs (100 s); mergeable by adding counts. */
export const BUCKETS = 1900;
const PER_E = 100; // buckets per factor e: bucket i covers [e^(i/100), e^((i+1)/100)) µs

export function bucketOf(us: number): number {
  if (!(us >= 1)) return 0;
  const b = Math.floor(Math.log(us) * PER_E);
  return b >= BUCKETS ? BUCKETS - 1 : b;
}

export function newHist(): number[] {
  return new Array<number>(BUCKETS).fill(0);
}

export function mergeHist(into: number[], from: number[]): number[] {
  for (let i = 0; i < BUCKETS; i++) into[i] += from[i] ?? 0;
  return into;
}

/** The q-quantile (0..1) in milliseconds (bucket midpoint), or NaN for an empty histogram. */
export function quantileMs(h: number[], q: number): number {
  const total = h.reduce((s, c) => s + c, 0);
  if (total === 0) return NaN;
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (let i = 0; i < h.length; i++) {
    seen += h[i];
    if (seen >= rank) return Math.exp((i + 0.5) / PER_E) / 1000;
  }
  return NaN;
}

/**
 * The note each benchmark write carries: `r=<run> t=<send time µs>`. Events are matched to
 * the run they belong to (late frames of an earlier run are not counted) and timed from t.
 */
export const noteOf = (run: number, t: number): string => `r=${run} t=${t}`;

const MARK = Buffer.from('"note":"r=');

/** Parsed by hand from the raw frame (no JSON.parse per message per client). */
export interface Stamp {
  run: number;
  t: number;
}

/** Fills `out` from a message's note and returns true, or false when it has none. */
export function readStamp(b: Buffer, out: Stamp): boolean {
  let i = b.indexOf(MARK);
  if (i < 0) return false;
  i += MARK.length;
  let run = 0;
  while (b[i] >= 48 && b[i] <= 57) run = run * 10 + (b[i++] - 48);
  if (b[i] !== 32 || b[i + 1] !== 116 || b[i + 2] !== 61) return false; // " t="
  i += 3;
  let t = 0;
  while (b[i] >= 48 && b[i] <= 57) t = t * 10 + (b[i++] - 48);
  out.run = run;
  out.t = t;
  return true;
}
