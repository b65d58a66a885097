import fc from 'fast-check';
import { hashVerifier, issueToken, parseToken, verifierMatches } from './tokens';

describe('split tokens', () => {
  it('issue tokens that parse back into their selector and a verifier matching the stored hash', () => {
    for (let i = 0; i < 50; i++) {
      const t = issueToken();
      const parts = parseToken(t.token)!;
      expect(parts.selector).toBe(t.selector);
      expect(verifierMatches(t.verifierHash, hashVerifier(parts.verifier))).toBe(true);
    }
  });
  it('never match another verifier', () => {
    const t = issueToken();
    fc.assert(fc.property(fc.string(), (v) => expect(verifierMatches(t.verifierHash, hashVerifier(v))).toBe(false)));
    expect(verifierMatches(t.verifierHash, 'zz')).toBe(false);
  });
  it('reject strings that are not tokens', () => {
    fc.assert(fc.property(fc.string(), (s) => expect(parseToken(s)).toBeNull()));
  });
});
