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
});
