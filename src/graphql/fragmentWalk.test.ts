import fc from 'fast-check';
import { Kind, parse, type FragmentDefinitionNode } from 'graphql';
import { fragmentMeasure } from './fragmentWalk';

/** The fragments of a document by name, and a measure that counts spreads reachable (each fragment once per path). */
function setup(doc: string) {
  const frags = new Map<string, FragmentDefinitionNode>();
  for (const d of parse(doc).definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) frags.set(d.name.value, d);
  const calls: string[] = [];
  const size = fragmentMeasure(
    (name) => frags.get(name),
    (fragment): number => {
      calls.push(fragment.name.value);
      let n = 1;
      for (const sel of fragment.selectionSet.selections) if (sel.kind === Kind.FRAGMENT_SPREAD) n += size(sel.name.value);
      return n;
    },
    0,
  );
  return { size, calls };
}

describe('fragmentMeasure', () => {
  it('measures each fragment once however often it is spread', () => {
    const { size, calls } = setup('fragment A on U { ...B ...B ...C } fragment B on U { ...C ...C } fragment C on U { id }');
    expect(size('A')).toBe(1 + 2 * (1 + 2) + 1);
    expect(size('A')).toBe(8);
    expect(calls.sort()).toEqual(['A', 'B', 'C']);
  });

  it('gives `none` for an unknown name and for a spread that closes a cycle, and does not throw', () => {
    const { size } = setup('fragment A on U { ...B } fragment B on U { ...A ...Missing }');
    expect(size('Missing')).toBe(0);
    expect(size('A')).toBe(2); // A + B, the spread back to A is none
    expect(size('B')).toBe(1); // memoized while A was measured: B saw A in progress
  });

  it('stays linear on a chain that spreads each next fragment twice (generated lengths)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), (n) => {
        const doc = Array.from({ length: n }, (_, i) => `fragment F${i} on U { id ${i < n - 1 ? `...F${i + 1} ...F${i + 1}` : ''} }`).join('\n');
        const { size, calls } = setup(doc);
        expect(size('F0')).toBe(2 ** n - 1);
        expect(calls).toHaveLength(n);
      }),
      { numRuns: 30 },
    );
  });

  it('clears the in-progress mark when a measure throws', () => {
    let fail = true;
    const frag = parse('fragment A on U { id }').definitions[0] as FragmentDefinitionNode;
    const m = fragmentMeasure(
      () => frag,
      () => {
        if (fail) throw new Error('boom');
        return 7;
      },
      0,
    );
    expect(() => m('A')).toThrow('boom');
    fail = false;
    expect(m('A')).toBe(7);
  });
});
