/** Prometheus text exposition -> value of the first sample of `name` (any labels). */
export function metric(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+|NaN)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}
