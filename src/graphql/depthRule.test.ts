import fc from 'fast-check';
import { parse, specifiedRules, validate } from 'graphql';
import { depthRule } from './depthRule';
import { check, contractSchema } from './testSchema';

const rule = depthRule({ maxDepth: 4 });
const nest = (field: string, levels: number, leaf = 'name'): string => (levels === 0 ? leaf : `${field} { ${nest(field, levels - 1, leaf)} }`);

describe('depthRule (root field at depth 0, limit 4)', () => {
  it('accepts the priced shape user{posts{comments{author{name}}}} (name at depth 4)', () => {
    expect(check('{ user(id: "u1") { posts { comments { author { name } } } } }', [rule])).toEqual([]);
  });

  it('rejects five nested list levels with GRAPHQL_VALIDATION_FAILED', () => {
    const errors = check(`{ user(id: "u1") { ${nest('friends', 5)} } }`, [rule]);
    expect(errors).toHaveLength(1);
    expect(errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(errors[0].extensions).not.toHaveProperty('depth');
  });

  it('is exactly the nesting: n list levels under user pass iff n <= 3', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 12 }), (n) => {
        const errors = check(`{ user(id: "u1") { ${nest('friends', n)} } }`, [rule]);
        expect(errors.length === 0).toBe(n + 1 <= 4);
      }),
    );
  });

  it('counts through fragments and inline fragments, and shows depth only when asked', () => {
    const q = `
      query Deep { user(id: "u1") { ...F } }
      fragment F on User { friends { ... on User { friends { friends { friends { name } } } } } }`;
    const hidden = check(q, [rule]);
    expect(hidden).toHaveLength(1);
    const shown = check(q, [depthRule({ maxDepth: 4, showCost: true })]);
    expect(shown[0].extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', depth: 5, maxDepth: 4 });
  });

  it('survives fragment cycles and unknown fragments: reported by graphql-js rules, never thrown', () => {
    const cyclic = `{ user(id: "u1") { ...A } } fragment A on User { friends { ...B } } fragment B on User { friends { ...A } }`;
    expect(() => check(cyclic, [rule])).not.toThrow();
    const all = validate(contractSchema, parse(cyclic), [...specifiedRules, rule]);
    expect(all.some((e) => /cycle|itself/i.test(e.message))).toBe(true);
    expect(() => check('{ user(id: "u1") { ...Missing } }', [rule])).not.toThrow();
  });

  it('stays linear when fragments spread each other many times (no blow-up)', () => {
    // F0 spreads F1 twice, F1 spreads F2 twice ... : 2^40 expanded paths.
    const frags = Array.from({ length: 40 }, (_, i) => `fragment F${i} on User { id ${i < 39 ? `a: friends { ...F${i + 1} } b: friends { ...F${i + 1} }` : ''} }`);
    const q = `{ user(id: "u1") { ...F0 } } ${frags.join(' ')}`;
    const started = Date.now();
    const errors = check(q, [rule]);
    expect(errors).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('exempts __schema and __type (introspection) from the limit', () => {
    const q = '{ __schema { types { fields { type { ofType { ofType { ofType { name } } } } } } } }';
    expect(check(q, [rule])).toEqual([]);
  });
});
