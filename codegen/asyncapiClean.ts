/**
 * A parsed AsyncAPI value without the parser's bookkeeping (`x-parser-*`, `$id`); with
 * `sortKeys`, every object's keys in order too (codegen writes deterministic output). One
 * module for codegen and the compatibility gate: codegen/asyncapi.ts itself loads
 * openapi-typescript, whose ESM-only dependencies jest (CommonJS) cannot load.
 */
export function clean(value: unknown, sortKeys = false): unknown {
  if (Array.isArray(value)) return value.map((v) => clean(v, sortKeys));
  if (value && typeof value === 'object') {
    const kept = Object.entries(value).filter(([k]) => !k.startsWith('x-parser-') && k !== '$id');
    if (sortKeys) kept.sort(([a], [b]) => a.localeCompare(b));
    return Object.fromEntries(kept.map(([k, v]) => [k, clean(v, sortKeys)]));
  }
  return value;
}
