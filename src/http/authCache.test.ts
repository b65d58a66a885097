import fc from 'fast-check';
import { AuthCache } from './authCache';

const acct = (id: number, name = `a${id}`) => ({ id, name, pinnedVersion: null });

describe('AuthCache', () => {
  it('answers within the TTL and forgets after it', () => {
    let t = 5000; // lru-cache reads a start time of 0 as "no TTL"
    const c = new AuthCache(1000, { now: () => t });
    c.set('h', acct(1));
    t = 5999;
    expect(c.get('h')).toEqual(acct(1));
    t = 6001;
    expect(c.get('h')).toBeUndefined();
  });
  it('stores nothing with a TTL of 0', () => {
    const c = new AuthCache(0);
    c.set('h', acct(1));
    expect(c.get('h')).toBeUndefined();
  });
  it('is bounded in entries, evicting the least recently used', () => {
    const c = new AuthCache(1000, { max: 2 });
    c.set('a', acct(1));
    c.set('b', acct(2));
    c.set('c', acct(3));
    expect(c.get('a')).toBeUndefined();
    expect(c.get('c')).toEqual(acct(3));
  });
  it('holds the byte bound whatever the keys and names (property)', () => {
    const maxBytes = 4096;
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ maxLength: 300 }), fc.string({ maxLength: 300 })), { maxLength: 200 }), (pairs) => {
        const c = new AuthCache(60_000, { max: 1000, maxBytes });
        let held = 0;
        const seen = new Map<string, number>();
        for (const [key, name] of pairs) {
          c.set(key, acct(1, name));
          seen.set(key, 64 + 2 * (key.length + name.length));
        }
        for (const [key, bytes] of seen) if (c.get(key) !== undefined) held += bytes;
        return held <= maxBytes;
      }),
    );
  });
});
