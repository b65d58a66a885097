import fc from 'fast-check';
import { duplicateMember } from './duplicateMembers';

/** A JSON value written by hand, so an object may repeat a name and a name may be spelled with escapes. */
type Tree = { kind: 'leaf'; value: unknown } | { kind: 'array'; items: Tree[] } | { kind: 'object'; members: [string, Tree][] };

/** Writes `name` as a JSON string, some characters as `\uXXXX` escapes (the same name to a parser). */
const spell = (name: string, escapeMask: number) =>
  `"${[...name].map((ch, i) => ((escapeMask >> (i % 30)) & 1 && ch.length === 1 ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : JSON.stringify(ch).slice(1, -1))).join('')}"`;

const write = (t: Tree, mask: number): string =>
  t.kind === 'leaf' ? JSON.stringify(t.value) : t.kind === 'array' ? `[${t.items.map((x) => write(x, mask)).join(',')}]` : `{${t.members.map(([k, v]) => `${spell(k, mask)}: ${write(v, mask)}`).join(' ,')}}`;

/** The oracle: the first repeated name in document order, found on the parsed-by-hand tree. */
function firstDuplicate(t: Tree, at: string[] = []): { name: string; pointer: string } | undefined {
  if (t.kind === 'leaf') return undefined;
  if (t.kind === 'array') {
    for (const [i, x] of t.items.entries()) {
      const d = firstDuplicate(x, [...at, String(i)]);
      if (d) return d;
    }
    return undefined;
  }
  const seen = new Set<string>();
  for (const [k, v] of t.members) {
    if (seen.has(k)) return { name: k, pointer: [...at, k].map((s) => `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('') };
    seen.add(k);
    const d = firstDuplicate(v, [...at, k]);
    if (d) return d;
  }
  return undefined;
}

// Few distinct names, so repeats are common; quotes, backslashes, braces and slashes inside names and values.
const name = fc.constantFrom('a', 'b', 'note', '', 'a"b', 'a\\', '{', '}', ',', '[', 'x/y', '~1', 'é', '\u0000', '"');
const { tree } = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.boolean(), fc.constantFrom('"}', '\\"', '{"a":1,"a":2}', '\\')).map((value) => ({ kind: 'leaf' as const, value })),
    fc.array(tie('tree'), { maxLength: 4 }).map((items) => ({ kind: 'array' as const, items })),
    fc.array(fc.tuple(name, tie('tree')), { maxLength: 5 }).map((members) => ({ kind: 'object' as const, members })),
  ),
}));

describe('duplicateMember', () => {
  it('finds the first name repeated in one object, with its pointer, however it is spelled', () => {
    fc.assert(
      fc.property(tree, fc.nat(), (t, mask) => {
        const text = write(t, mask);
        JSON.parse(text); // the caller's precondition: text JSON.parse accepts
        expect(duplicateMember(text)).toEqual(firstDuplicate(t));
      }),
      { numRuns: 2000 },
    );
  });
  it('finds none in what JSON.stringify writes (it cannot repeat a name)', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => expect(duplicateMember(JSON.stringify(v, null, v === null ? 0 : 2))).toBeUndefined()));
  });
  it('names the member and where it is', () => {
    expect(duplicateMember('{"items":[{"sku":"a"},{"sku":"a","quantity":1,"sku":"b"}]}')).toEqual({ name: 'sku', pointer: '/items/1/sku' });
    expect(duplicateMember('{"note":"a","\\u006eote":"b"}')).toEqual({ name: 'note', pointer: '/note' });
    expect(duplicateMember('{"a":{"b":1},"b":2,"c":{"b":3}}')).toBeUndefined();
  });
});
