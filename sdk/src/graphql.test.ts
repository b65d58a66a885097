import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { parse } from 'graphql';
import { sha256Hex } from './graphql';
import { printDocument } from './print';
import { persistedOperations } from './generated/persisted';
import { manifest } from '../../generated/graphql/persisted';

describe('the GraphQL client hashes as the server does', () => {
  it("prints each contract operation to the manifest's exact text, and hashes it to the manifest's hash", async () => {
    for (const [name, op] of Object.entries(persistedOperations)) {
      expect({ name, text: printDocument(parse(op.text)) }).toEqual({ name, text: op.text });
      expect(await sha256Hex(op.text)).toBe(op.hash);
      expect(manifest[op.hash]).toBe(op.text);
    }
  });

  it("Web Crypto SHA-256 hex equals node:crypto's (the server's) for any text, non-ASCII included (generated)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 200 }), async (text) => {
        expect(await sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
      }),
    );
  });
});
