import { specifiedRules } from 'graphql';
import fc from 'fast-check';
import { DocumentCache } from './documents';
import { costRule } from './costRule';
import { contractSchema } from './testSchema';

describe('DocumentCache', () => {
  it('parses and validates a text once, then answers from the cache (errors included)', () => {
    const cache = new DocumentCache(contractSchema, specifiedRules, 1000, 10);
    const a = cache.prepare('{ viewer { id } }');
    const b = cache.prepare('{ viewer { id } }');
    expect(a.ok && b.ok && a.document === b.document).toBe(true);
    const bad1 = cache.prepare('{ viewer { nope } }');
    const bad2 = cache.prepare('{ viewer { nope } }');
    expect(bad1.ok && bad1.errors.length).toBe(1);
    expect(bad1.ok && bad2.ok && bad1.errors === bad2.errors).toBe(true);
  });

  it('says what to change when graphql-js stops validating a selection that repeats a field too often', () => {
    const cache = new DocumentCache(contractSchema, specifiedRules, 5000, 10);
    const many = cache.prepare(`{ viewer { ${'name '.repeat(1000)}} }`);
    expect(many.ok && many.errors.map((e) => e.message)).toEqual([expect.stringMatching(/^Validation aborted: a selection repeats fields too many times .*ask for each field once$/)]);
    const few = cache.prepare(`{ viewer { ${'name '.repeat(100)}} }`);
    expect(few.ok && few.errors).toEqual([]);
  });

  it('does not cache parse failures, enforces the token limit, and size 0 turns caching off', () => {
    const cache = new DocumentCache(contractSchema, specifiedRules, 20, 10);
    expect(cache.prepare('{ viewer {')).toMatchObject({ ok: false });
    const long = cache.prepare(`{ viewer { ${'id '.repeat(30)} } }`);
    expect(long.ok).toBe(false);
    expect(!long.ok && long.parseError.message).toMatch(/token/i);
    const off = new DocumentCache(contractSchema, specifiedRules, 1000, 0);
    const [x, y] = [off.prepare('{ viewer { id } }'), off.prepare('{ viewer { id } }')];
    expect(x.ok && y.ok && x.document !== y.document).toBe(true);
  });

  it('judges every request by the variable rules, remembering the verdict per variables', () => {
    const cache = new DocumentCache(contractSchema, specifiedRules, 1000, 10);
    const q = 'query Q($n: Int) { user(id: "u1") { friends(first: $n) { id } } }';
    let computed = 0;
    const rules = (variables: Record<string, unknown>) => () => (computed++, [costRule({ maxCost: 100, variables })]);
    const verdict = (n: number) => {
      const p = cache.prepare(q);
      if (!p.ok) throw new Error('parse');
      return cache.limitErrors(p, { n }, undefined, rules({ n })).length;
    };
    expect([verdict(5), verdict(50), verdict(5), verdict(50)]).toEqual([0, 1, 0, 1]);
    expect(computed).toBe(2);
    const off = new DocumentCache(contractSchema, specifiedRules, 1000, 0);
    const p = off.prepare(q);
    if (!p.ok) throw new Error('parse');
    off.limitErrors(p, { n: 5 }, undefined, rules({ n: 5 }));
    off.limitErrors(p, { n: 5 }, undefined, rules({ n: 5 }));
    expect(computed).toBe(4);
  });
});

describe('DocumentCache bounds', () => {
  it('holds its byte bounds whatever texts and variables a client sends (generated, large variables)', () => {
    const maxBytes = 64 * 1024;
    const verdictMaxBytes = 256 * 1024;
    const texts = ['query Q($n: Int) { user(id: "u1") { friends(first: $n) { id } } }', '{ viewer { id } }', 'query R($x: String) { viewer { name } }'];
    fc.assert(
      fc.property(
        fc.array(fc.record({ text: fc.constantFrom(...texts), pad: fc.nat({ max: 4 }), blob: fc.string({ minLength: 0, maxLength: 20_000 }), n: fc.nat({ max: 50 }) }), { minLength: 1, maxLength: 60 }),
        (requests) => {
          const cache = new DocumentCache(contractSchema, specifiedRules, 1000, 1000, { maxBytes, verdictMaxBytes });
          for (const { text, pad, blob, n } of requests) {
            // Distinct texts too (whitespace padding), so the text cache is driven as well.
            const p = cache.prepare(`${' '.repeat(pad * 5000)}${text}`);
            if (!p.ok) return false;
            cache.limitErrors(p, { n, blob: blob.repeat(3) }, undefined, () => [costRule({ maxCost: 1000, variables: { n } })]);
            const u = cache.usage;
            if (u.textBytes > maxBytes || u.verdictBytes > verdictMaxBytes) return false;
          }
          return true;
        },
      ),
      { numRuns: 40 },
    );
  });

  it('counts what it holds: a repeated large variable set is remembered once', () => {
    const cache = new DocumentCache(contractSchema, specifiedRules, 1000, 10);
    const p = cache.prepare('{ viewer { id } }');
    if (!p.ok) throw new Error('parse');
    const vars = { blob: 'x'.repeat(1000) };
    cache.limitErrors(p, vars, undefined, () => []);
    const once = cache.usage.verdictBytes;
    cache.limitErrors(p, vars, undefined, () => []);
    expect(cache.usage).toMatchObject({ verdicts: 1, verdictBytes: once });
    expect(once).toBeGreaterThan(2000);
  });
});
