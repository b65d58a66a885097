import fc from 'fast-check';
import { closeReason } from './subscriptions';

describe('closeReason', () => {
  it('fits a close frame (123 bytes of UTF-8), keeps short text whole and cuts long text at a character (generated)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.constantFrom('a', 'é', '€', '😀'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 200 }), (text) => {
        const reason = closeReason(text);
        expect(Buffer.byteLength(reason)).toBeLessThanOrEqual(123);
        if (Buffer.byteLength(text) <= 123) expect(reason).toBe(text);
        else {
          expect(reason.endsWith('...')).toBe(true);
          expect(text.startsWith(reason.slice(0, -3))).toBe(true);
          expect(reason.slice(0, -3)).toBe(Buffer.from(reason.slice(0, -3)).toString()); // no half of a surrogate pair
        }
      }),
    );
  });
});
