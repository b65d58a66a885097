/**
 * The in-process registry lookup's behaviour (`PeekableRegistry`), one suite for every
 * adapter offering it. Excluded from the build (tsconfig.build.json).
 */
import { sha256Hex } from './persisted';
import { isPeekable, type PeekableRegistry, type PersistedQueryRegistry } from './registry';

export function runPeekableRegistryContract(name: string, make: () => Promise<{ registry: PersistedQueryRegistry & PeekableRegistry; close(): Promise<void> }>): void {
  describe(`PeekableRegistry contract: ${name}`, () => {
    let made: { registry: PersistedQueryRegistry & PeekableRegistry; close(): Promise<void> };
    beforeEach(async () => {
      made = await make();
    });
    afterEach(() => made.close());

    it('is recognised by isPeekable', () => {
      expect(isPeekable(made.registry)).toBe(true);
    });

    it('peeks without I/O at what this process holds: a registered text, never another one', async () => {
      const text = `{ user(id: "${Math.random()}") { name } }`;
      expect(made.registry.peek(sha256Hex(text))).toBeUndefined();
      await made.registry.set(sha256Hex(text), text);
      expect(made.registry.peek(sha256Hex(text))).toBe(text);
      expect(made.registry.peek(sha256Hex(`${text} `))).toBeUndefined();
    });

    it('answers what get answers for a text this process registered', async () => {
      const text = `{ user(id: "${Math.random()}") { id } }`;
      await made.registry.set(sha256Hex(text), text);
      expect(made.registry.peek(sha256Hex(text))).toBe(await made.registry.get(sha256Hex(text)));
    });
  });
}
