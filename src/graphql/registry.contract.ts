/**
 * The PersistedQueryRegistry port's behaviour, one suite for every adapter (as
 * each store port's). Excluded from the build (tsconfig.build.json).
 */
import { sha256Hex } from './persisted';
import type { PersistedQueryRegistry } from './registry';

export function runRegistryContract(name: string, make: () => Promise<{ registry: PersistedQueryRegistry; close(): Promise<void> }>): void {
  describe(`PersistedQueryRegistry contract: ${name}`, () => {
    let made: { registry: PersistedQueryRegistry; close(): Promise<void> };
    beforeEach(async () => {
      made = await make();
    });
    afterEach(() => made.close());

    it('knows nothing it was not given', async () => {
      await expect(made.registry.get(sha256Hex('{ viewer { id } }'))).resolves.toBeUndefined();
    });

    it('returns a registered text by its hash, the latest registration winning', async () => {
      const text = `{ user(id: "${Math.random()}") { id } }`;
      await made.registry.set(sha256Hex(text), text);
      await expect(made.registry.get(sha256Hex(text))).resolves.toBe(text);
      const other = `${text} `;
      await made.registry.set(sha256Hex(other), other);
      await expect(made.registry.get(sha256Hex(other))).resolves.toBe(other);
      await expect(made.registry.get(sha256Hex(text))).resolves.toBe(text);
    });
  });
}
