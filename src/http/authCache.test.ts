import { AuthCache } from './authCache';

const acct = (id: number) => ({ id, name: `a${id}`, pinnedVersion: null });

describe('AuthCache', () => {
  it('answers within the TTL and forgets after it', () => {
    const c = new AuthCache(1000);
    c.set('h', acct(1), 0);
    expect(c.get('h', 999)).toEqual(acct(1));
    expect(c.get('h', 1000)).toBeUndefined();
  });
  it('stores nothing with a TTL of 0', () => {
    const c = new AuthCache(0);
    c.set('h', acct(1), 0);
    expect(c.get('h', 0)).toBeUndefined();
  });
  it('is bounded, evicting the oldest', () => {
    const c = new AuthCache(1000, 2);
    c.set('a', acct(1), 0);
    c.set('b', acct(2), 0);
    c.set('c', acct(3), 0);
    expect(c.get('a', 1)).toBeUndefined();
    expect(c.get('c', 1)).toEqual(acct(3));
  });
});
