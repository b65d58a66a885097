/** A number from the environment (benchmark settings), or `def`; positive unless `zero` allows 0. */
export function envNumber(name: string, def: number, zero = false): number {
  const v = Number(process.env[name] ?? def);
  if (!Number.isFinite(v) || v < 0 || (v === 0 && !zero)) throw new Error(`${name} must be a ${zero ? 'non-negative' : 'positive'} number`);
  return v;
}
