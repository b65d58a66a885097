import fc from 'fast-check';
import { RepresentationCache } from './representationCache';

describe('representation cache', () => {
  it('keeps at most max entries, evicting the least recently used', () => {
    const c = new RepresentationCache<number>(2);
    c.set('a', 1);
    c.set('b', 2);
    expect(c.get('a')).toBe(1); // a is now the most recent
    c.set('c', 3);
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')).toBe(1);
    expect(c.get('c')).toBe(3);
    expect(c.size).toBe(2);
  });

  it('holds its byte bound whatever the sizes of the representations (generated)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 5000 })), { maxLength: 100 }), (entries) => {
        const c = new RepresentationCache<{ json: string }>(1000, (v, k) => 64 + 2 * (k.length + v.json.length), 20_000);
        for (const [k, json] of entries) {
          c.set(k, { json });
          if (c.bytes > 20_000) return false;
        }
        return true;
      }),
    );
  });
});
