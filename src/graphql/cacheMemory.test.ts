/**
 * What cached and compiled documents pin, measured on the heap rather than taken from the
 * cache's own weights. Documents a client may send (aliases of orders with arguments,
 * users with a fragment, the viewer, several operations sharing a fragment) are prepared
 * and executed twice per operation, so compiled.ts compiles them, by a cache and an
 * executor wired as the GraphQL engine wires them (engine.ts) and kept alive as a server
 * keeps them.
 * - Before, weighing only the text let such documents pin about 10 times the byte bound.
 * - Before, V8's compilation cache kept every compiled document after it was gone: with
 *   the cache bounded to two entries, 60 documents left about 25 MB behind.
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
// V8's default, whatever an earlier test file in this worker did: compiledExecutor must turn it off itself.
setFlagsFromString('--compilation-cache');

function heapAfterGc(): number {
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage().heapUsed;
}

type Shape = { aliases: number; kind: 'order' | 'user' | 'viewer' | 'operations' };

/** A document a client could write (its text made distinct by `n`) and the operation names to run. */
function documentOf({ aliases, kind }: Shape, n: number): { text: string; operations: (string | undefined)[] } {
  const field = (i: number) =>
    kind === 'order' || kind === 'operations'
      ? `o${n}_${i}: order(id: "${n * 1000 + i}") { id note revision }`
      : kind === 'user'
        ? `u${n}_${i}: user(id: "u${i}") { id name friends(first: 2) { id ...F } }`
        : `v${n}_${i}: viewer { id name }`;
  // Several operations each compile the fragment: a quarter of the aliases keeps one document under the bound.
  const fields = Array.from({ length: kind === 'operations' ? Math.ceil(aliases / 4) : aliases }, (_, i) => field(i)).join(' ');
  if (kind === 'user') return { text: `query Q${n} { ${fields} } fragment F on User { name }`, operations: [undefined] };
  if (kind !== 'operations') return { text: `{ ${fields} }`, operations: [undefined] };
  // Several operations sharing one fragment: each is compiled on its own.
  const names = Array.from({ length: 1 + (aliases % 8) }, (_, k) => `Op${n}_${k}`);
  return { text: `${names.map((name) => `query ${name} { ...F${n} }`).join(' ')} fragment F${n} on Query { ${fields} }`, operations: names };
}

const shapes = (runs: number): Shape[] => fc.sample(fc.record({ aliases: fc.integer({ min: 1, max: 60 }), kind: fc.constantFrom<Shape['kind']>('order', 'user', 'viewer', 'operations') }), { numRuns: runs, seed: 29 });

/** A cache and an executor wired as the engine wires them; `run` prepares and executes one operation. */
function engine(size: number, maxBytes: number) {
  const cache = new DocumentCache(contractSchema, specifiedRules, 2000, size, { maxBytes });
  let compiles = 0;
  const execute = compiledExecutor(contractSchema, {
    onCompile: (document) => {
      compiles++;
      cache.compiled(document);
    },
  });
  const run = (text: string, operationName?: string): ExecutionResult => {
    const p = cache.prepare(text);
    if (!p.ok || p.errors.length > 0) throw new Error(`not a valid document: ${text.slice(0, 80)}`);
    return execute({ schema: contractSchema, document: p.document, operationName, rootValue: {}, contextValue: {} }) as ExecutionResult;
  };
  /** Every operation of a shape's document, each executed twice (the second compiles it). */
  const runTwice = (shape: Shape, n: number) => {
    const { text, operations } = documentOf(shape, n);
    for (const name of operations) {
      expect(run(text, name).errors).toBeUndefined();
      run(text, name);
    }
  };
  return { cache, runTwice, compiles: () => compiles };
}

/** Heap held after `work` on a fresh engine, the engine itself (its empty caches) counted before. */
function pinnedBy(size: number, maxBytes: number, work: (e: ReturnType<typeof engine>) => void): { pinned: number; e: ReturnType<typeof engine> } {
  // What loads lazily (graphql-jit's compiler) is loaded before the baseline.
  const warm = engine(10, 1 << 30);
  for (const kind of ['order', 'user', 'viewer', 'operations'] as const) warm.runTwice({ aliases: 3, kind }, 99_999);
  const e = engine(size, maxBytes);
  const before = heapAfterGc();
  work(e);
  const pinned = heapAfterGc() - before;
  return { pinned, e }; // `e` is alive until here, as a server keeps its engine
}

describe('GraphQL document memory', () => {
  it('the document cache pins no more heap than it weighs, within its byte bound, compiled forms included (generated documents)', () => {
    const maxBytes = 8 * 1024 * 1024;
    const { pinned, e } = pinnedBy(10_000, maxBytes, (e) => shapes(80).forEach((shape, n) => e.runTwice(shape, n)));
    expect(e.compiles()).toBeGreaterThan(80);
    expect(e.cache.usage.texts).toBeGreaterThan(1);
    expect(e.cache.usage.textBytes).toBeLessThanOrEqual(maxBytes);
    expect(pinned).toBeLessThanOrEqual(e.cache.usage.textBytes);
  });

  it('weighs each compiled operation of a document: eight operations sharing one fragment', () => {
    // 127 aliases: 1 + 127 % 8 = 8 operations, a fragment of 32 fields.
    const { pinned, e } = pinnedBy(10, 1 << 30, (e) => e.runTwice({ kind: 'operations', aliases: 127 }, 1));
    expect(e.compiles()).toBe(8);
    expect(e.cache.usage.texts).toBe(1);
    expect(pinned).toBeLessThanOrEqual(e.cache.usage.textBytes);
  });

  it('a compiled document leaves nothing behind once the cache lets it go', () => {
    const { pinned, e } = pinnedBy(2, 1 << 30, (e) => shapes(60).forEach((shape, n) => e.runTwice({ kind: shape.kind === 'operations' ? 'order' : shape.kind, aliases: 40 }, n)));
    expect(e.compiles()).toBe(60);
    // Two 40-alias documents and their compiled forms: well under 4 MB.
    expect(pinned).toBeLessThan(4 * 1024 * 1024);
  });
});
