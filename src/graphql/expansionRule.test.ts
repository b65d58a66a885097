import fc from 'fast-check';
import { parse, validate } from 'graphql';
import { expansionRule } from './expansionRule';
import { check, contractSchema } from './testSchema';

/** `fragment F<i>` spreads F<i-1> twice: 1.5 KB of text at 21 levels, 2^21 selections written out. */
const bomb = (levels: number) => {
  let fragments = 'fragment F0 on User { __typename }\n';
  for (let i = 1; i <= levels; i++) fragments += `fragment F${i} on User { ... on User { ...F${i - 1} } ... on User { ...F${i - 1} } }\n`;
  return `{ viewer { ...F${levels} } }\n${fragments}`;
};
/** What the rule measures, shown in extensions (a limit of 0 reports every operation). */
const measured = (query: string): unknown => validate(contractSchema, parse(query), [expansionRule({ maxSelections: 0, showCost: true })])[0]?.extensions.selections;

describe('expansionRule', () => {
  it('refuses a fragment bomb of cost 0 and depth 1 before it runs, and admits the same shape a few levels deep', () => {
    const errors = check(bomb(21), [expansionRule({ maxSelections: 2000 })]);
    expect(errors).toHaveLength(1);
    expect(errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(errors[0].message).toMatch(/more selections than the limit allows once its fragments are written out/);
    expect(check(bomb(4), [expansionRule({ maxSelections: 2000 })])).toEqual([]);
    // F<i> = 2 x (2 + F<i-1>), F0 = 1; the operation adds viewer and the spread.
    const f = (i: number): number => (i === 0 ? 1 : 2 * (2 + f(i - 1)));
    expect(measured(bomb(21))).toBe(2 + f(21));
  });

  it('counts a document with fragments as the same document written out, plus one per spread', () => {
    type Tree = { name: string; children: readonly Tree[] };
    const tree: fc.Arbitrary<Tree> = fc.letrec<{ node: Tree }>((t) => ({
      node: fc.record({ name: fc.constantFrom('a', 'b', 'c'), children: fc.oneof({ depthSize: 'small' }, fc.constant([]), fc.array(t('node'), { minLength: 1, maxLength: 3 })) }),
    })).node;
    fc.assert(
      fc.property(fc.array(tree, { minLength: 1, maxLength: 4 }), (roots) => {
        let nodes = 0;
        let spreads = 0;
        const fragments: string[] = [];
        const inline = (t: Tree): string => (nodes++, t.children.length ? `${t.name} { ${t.children.map(inline).join(' ')} }` : t.name);
        // Every selection set of a field becomes a fragment of its own, spread where it was.
        const spread = (t: Tree): string => {
          if (!t.children.length) return t.name;
          const name = `F${fragments.length}`;
          fragments.push('');
          const at = fragments.length - 1;
          fragments[at] = `fragment ${name} on Query { ${t.children.map(spread).join(' ')} }`;
          spreads++;
          return `${t.name} { ...${name} }`;
        };
        const written = `{ ${roots.map(inline).join(' ')} }`;
        const withFragments = `{ ${roots.map(spread).join(' ')} }\n${fragments.join('\n')}`;
        expect(measured(written)).toBe(nodes);
        expect(measured(withFragments)).toBe(nodes + spreads);
      }),
    );
  });

  it('survives fragment cycles and unknown fragments: reported by graphql-js rules, never thrown', () => {
    const rule = expansionRule({ maxSelections: 10 });
    expect(() => check('{ viewer { ...A } } fragment A on User { ...B } fragment B on User { ...A }', [rule])).not.toThrow();
    expect(() => check('{ viewer { ...Missing } }', [rule])).not.toThrow();
  });
});
