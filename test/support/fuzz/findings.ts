/**
 * What a fuzzer found, by kind: in collect mode (FUZZ_COLLECT, target.ts) a violation is
 * recorded here and the run goes on, so one run against a build lists every kind of
 * defect it meets (the first example of each, and how often), not only the first.
 */
export class Findings {
  private readonly byKind = new Map<string, { count: number; example: string }>();

  constructor(readonly collect: boolean) {}

  /** Records a violation (collect mode) or throws it. `kind` groups repeats: operation and rule. */
  report(kind: string, detail: string): void {
    if (!this.collect) throw new Error(detail);
    const seen = this.byKind.get(kind);
    if (seen) seen.count++;
    else this.byKind.set(kind, { count: 1, example: detail });
  }

  get size(): number {
    return this.byKind.size;
  }

  /** One line per kind, with its count and first example (clipped). */
  lines(clip = 1200): string[] {
    return [...this.byKind.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([kind, { count, example }]) => `  ${kind}: ${count}x\n    ${(example.length > clip ? `${example.slice(0, clip)}...` : example).replace(/\n/g, '\n    ')}`);
  }
}
