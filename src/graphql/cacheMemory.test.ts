/**
 * What cached and compiled documents pin, measured on the heap rather than taken from the
 * cache's own weights. Documents a client may send (aliases of orders with arguments,
 * users with a fragment, the viewer) are prepared and executed twice, so compiled.ts
 * compiles them, wired as the GraphQL engine wires them (http.ts).
 * - Before, weighing only the text let these documents pin about 10 times the byte bound.
 * - Before, V8's compilation cache kept every compiled document after it was gone: with
 *   the cache bounded to two entries, 120 documents left about 40 MB behind.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { specifiedRules, type ExecutionResult } from 'graphql';
import fc from 'fast-check';
import { DocumentCache } from './documents';
import { compiledExecutor } from './compiled';
import { contractSchema } from './testSchema';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage().heapUsed;
}

type Shape = { aliases: number; kind: 'order' | 'user' | 'viewer' };

/** A document a client could write: `aliases` aliased fields of `kind`, its text made distinct by `n`. */
function documentText({ aliases, kind }: Shape, n: number): string {
  const field = (i: number) =>
    kind === 'order' ? `o${n}_${i}: order(id: "${n * 1000 + i}") { id note revision }` : kind === 'user' ? `u${n}_${i}: user(id: "u${i}") { id name friends(first: 2) { id ...F } }` : `v${n}_${i}: viewer { id name }`;
  const body = `{ ${Array.from({ length: aliases }, (_, i) => field(i)).join(' ')} }`;
  return kind === 'user' ? `query Q${n} ${body} fragment F on User { name }` : body;
}

const shapes = (runs: number): Shape[] => fc.sample(fc.record({ aliases: fc.integer({ min: 1, max: 60 }), kind: fc.constantFrom<Shape['kind']>('order', 'user', 'viewer') }), { numRuns: runs, seed: 29 });

/** A cache and an executor wired as the engine wires them; `run` prepares and executes a text. */
function engine(size: number, maxBytes: number) {
  const cache = new DocumentCache(contractSchema, specifiedRules, 2000, size, { maxBytes });
  const execute = compiledExecutor(contractSchema, { onCompile: (document) => cache.compiled(document) });
  const run = (text: string): ExecutionResult => {
    const p = cache.prepare(text);
    if (!p.ok || p.errors.length > 0) throw new Error(`not a valid document: ${text.slice(0, 80)}`);
    return execute({ schema: contractSchema, document: p.document, rootValue: {}, contextValue: {} }) as ExecutionResult;
  };
  return { cache, run };
}

/** Heap still held after `work`, with what loads lazily (graphql-jit's compiler) loaded before. */
function pinnedBy(work: () => unknown): { pinned: number; kept: unknown } {
  const warm = engine(10, 1 << 30);
  for (const kind of ['order', 'user', 'viewer'] as const) for (let k = 0; k < 2; k++) warm.run(documentText({ aliases: 3, kind }, 99_999));
  const before = heapAfterGc();
  const kept = work();
  return { pinned: heapAfterGc() - before, kept };
}

describe('GraphQL document memory', () => {
  it('the document cache pins no more heap than its byte bound, compiled forms included (generated documents)', () => {
    const maxBytes = 8 * 1024 * 1024;
    const { pinned, kept } = pinnedBy(() => {
      const e = engine(10_000, maxBytes);
      shapes(150).forEach((shape, n) => {
        const text = documentText(shape, n);
        expect(e.run(text).errors).toBeUndefined();
        e.run(text); // the second execution compiles it
      });
      return e.cache;
    });
    const cache = kept as DocumentCache;
    expect(cache.usage.textBytes).toBeLessThanOrEqual(maxBytes);
    expect(cache.usage.texts).toBeGreaterThan(1);
    expect(pinned).toBeLessThanOrEqual(maxBytes);
  });

  it('a compiled document leaves nothing behind once the cache lets it go', () => {
    const { pinned } = pinnedBy(() => {
      const e = engine(2, 1 << 30);
      shapes(120).forEach((shape, n) => {
        const text = documentText({ ...shape, aliases: 40 }, n);
        e.run(text);
        e.run(text);
      });
      return e.cache;
    });
    // Two 40-alias documents and their compiled forms: well under 4 MB.
    expect(pinned).toBeLessThan(4 * 1024 * 1024);
  });
});
