import fc from 'fast-check';
import { decodeCursor, encodeCursor } from './cursor';

describe('page cursor', () => {
  it('round-trips every id', () => {
    fc.assert(fc.property(fc.nat({ max: Number.MAX_SAFE_INTEGER }), (id) => expect(decodeCursor(encodeCursor(id))).toBe(id)));
  });
  it('rejects strings it did not issue', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const d = decodeCursor(s);
        if (d !== null) expect(encodeCursor(d)).toBe(Buffer.from(Buffer.from(s, 'base64url').toString('utf8')).toString('base64url'));
      }),
    );
    expect(decodeCursor('abc')).toBeNull();
    expect(decodeCursor(Buffer.from('c1:-1').toString('base64url'))).toBeNull();
  });
});
