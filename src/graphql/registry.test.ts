import fc from 'fast-check';
import { LruRegistry, registryEntryBytes } from './registry';
import { runRegistryContract } from './registry.contract';
import { runPeekableRegistryContract } from './peekableRegistry.contract';

describe('LruRegistry', () => {
  it('evicts the least recently used entry, a read counting as a use', async () => {
    const r = new LruRegistry(2);
    await r.set('a', 'A');
    await r.set('b', 'B');
    expect(await r.get('a')).toBe('A'); // a is now the most recent
    await r.set('c', 'C');
    expect(await r.get('b')).toBeUndefined();
    expect(await r.get('a')).toBe('A');
    expect(await r.get('c')).toBe('C');
  });

  it('never holds more than its bounds, whatever is set (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.string({ maxLength: 3 }), fc.string({ maxLength: 120 })), { maxLength: 200 }), async (ops) => {
        const r = new LruRegistry(5, 200);
        for (const [k, v] of ops) {
          await r.set(k, v);
          expect(r.size).toBeLessThanOrEqual(5);
          expect(r.bytes).toBeLessThanOrEqual(200);
          expect(await r.get(k)).toBe(registryEntryBytes(v, k) <= 200 ? v : undefined);
        }
      }),
    );
  });
});

runRegistryContract('LruRegistry', async () => ({ registry: new LruRegistry(10), close: async () => undefined }));
runPeekableRegistryContract('LruRegistry', async () => ({ registry: new LruRegistry(10), close: async () => undefined }));
