import fc from 'fast-check';
import { sha256Hex as serviceHash } from '../src/graphql/persisted';
import { sha256Hex } from './operations';

describe('the operation hash codegen writes into the allowlist', () => {
  it('is the hash the service computes for the same text (any text, astral and lone surrogates included)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' })), (text) => {
        expect(sha256Hex(text)).toBe(serviceHash(text));
      }),
    );
    // The protocol's own example: SHA-256 of the empty text.
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});
