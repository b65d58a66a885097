/** Memory trend of a soak: least-squares slope of samples over time, and the level they settle at. */

export interface Sample {
  /** Seconds since the load started. */
  t: number;
  rss: number;
  /** V8 heap used (bytes), when the metrics endpoint answered. */
  heap?: number;
  fds: number;
}

/** Ordinary least squares over (t, v): the slope in units per second; NaN for fewer than 2 distinct times. */
export function slope(points: { t: number; v: number }[]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mt = points.reduce((s, p) => s + p.t, 0) / n;
  const mv = points.reduce((s, p) => s + p.v, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - mt) * (p.v - mv);
    den += (p.t - mt) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

/** Slope in bytes per 10 minutes of one field of the samples taken at or after `from` seconds. */
export function slopePer10Min(samples: Sample[], field: 'rss' | 'heap', from: number): number {
  const pts = samples.filter((s) => s.t >= from && s[field] !== undefined).map((s) => ({ t: s.t, v: s[field]! }));
  return slope(pts) * 600;
}

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The median of a field over the samples in [from, to] seconds (the level there), NaN when none. */
export function levelOf(samples: Sample[], field: 'rss' | 'heap' | 'fds', from: number, to: number): number {
  return median(samples.filter((s) => s.t >= from && s.t <= to && s[field] !== undefined).map((s) => s[field]!));
}
