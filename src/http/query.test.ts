import fc from 'fast-check';
import { isRefusal } from './problem';
import { readQuery } from './query';

describe('readQuery (the one query reader: REST, streams, GraphQL GET)', () => {
  it('reads back what a client encodes, every pair however many, a repeated name as its list in order (generated)', () => {
    const name = fc.stringMatching(/^[a-z_]{1,6}$/);
    const value = fc.string({ unit: 'grapheme', maxLength: 8 });
    fc.assert(
      fc.property(fc.array(fc.tuple(name, value), { maxLength: 30 }), fc.integer({ min: 0, max: 1500 }), (pairs, filler) => {
        const all: [string, string][] = [...Array.from({ length: filler }, (_, i): [string, string] => [`f${i}`, '1']), ...pairs];
        const search = all.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
        const read = readQuery(search);
        if (isRefusal(read)) throw new Error(`refused ${search}`);
        for (const [k] of pairs) {
          const sent = all.filter(([n]) => n === k).map(([, v]) => v);
          expect(read[k]).toEqual(sent.length === 1 ? sent[0] : sent);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('refuses a query that is not percent-encoded UTF-8, rather than reading U+FFFD; + is a space', () => {
    for (const bad of ['a=%FF', 'a=%C3', 'a=1&b=%ED%A0%80', '%FF=1']) expect(isRefusal(readQuery(bad))).toBe(true);
    expect(readQuery('a=%C3%A9+x&b=%2B')).toEqual({ a: 'é x', b: '+' });
    expect(readQuery('')).toEqual({});
  });
});
