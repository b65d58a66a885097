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
        if (d !== null) expect(encodeCursor(d)).toBe(s); // only the exact text it writes
      }),
    );
    // Another spelling of an issued cursor's bytes (spare bits set, padding, characters base64url lacks): not ours.
    expect(decodeCursor('YzE6Mw')).toBe(3);
    for (const other of ['YzE6M1', 'YzE6Mw==', 'YzE6M w', 'YzE6Mw.']) expect(decodeCursor(other)).toBeNull();
    expect(decodeCursor('abc')).toBeNull();
    expect(decodeCursor(Buffer.from('c1:-1').toString('base64url'))).toBeNull();
  });
});
