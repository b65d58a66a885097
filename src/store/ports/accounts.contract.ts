/**
 * The accounts port's behaviour, one suite every adapter runs with its own factory: an
 * adapter that passes it can replace another without the service noticing.
 */
import type { Accounts } from './accounts';
import type { Closable } from './fixtures.contract';

/** A migrated, empty store; the suite closes it. */
export type AccountsFactory = () => Promise<Accounts & Closable>;

export function runAccountsContract(name: string, newStore: AccountsFactory): void {
  describe(`Accounts contract: ${name}`, () => {
    let store: Accounts & Closable;
    beforeEach(async () => {
      store = await newStore();
    });
    afterEach(() => store.close());

    it('creates an account once: ensureAccount is idempotent and names are distinct', async () => {
      const a = await store.ensureAccount('alice');
      expect(a).toMatchObject({ name: 'alice', pinnedVersion: null });
      expect(await store.ensureAccount('alice')).toEqual(a);
      const b = await store.ensureAccount('bob');
      expect(b.id).not.toBe(a.id);
    });

    it('finds an account by name without creating one', async () => {
      expect(await store.findAccount('dora')).toBeNull();
      expect(await store.findAccount('dora')).toBeNull(); // the lookup made none
      const d = await store.ensureAccount('dora');
      expect(await store.findAccount('dora')).toEqual(d);
    });

    it('makes one account of concurrent ensureAccount calls for one name', async () => {
      const made = await Promise.all(Array.from({ length: 8 }, () => store.ensureAccount('carol')));
      expect(new Set(made.map((a) => a.id)).size).toBe(1);
    });

    it('finds a token by its selector with the stored verifier hash, and nothing for an unknown selector', async () => {
      const a = await store.ensureAccount('alice');
      await store.addToken(a.id, 'selector-0000001', 'f'.repeat(64));
      await store.addToken(a.id, 'selector-0000003', 'e'.repeat(64));
      expect(await store.tokenBySelector('selector-0000001')).toEqual({ account: a, verifierHash: 'f'.repeat(64) });
      expect(await store.tokenBySelector('selector-0000003')).toEqual({ account: a, verifierHash: 'e'.repeat(64) });
      expect(await store.tokenBySelector('selector-0000002')).toBeNull();
    });

    it('lists an account’s tokens (selector and creation time, oldest first) and revokes one', async () => {
      const a = await store.ensureAccount('alice');
      const b = await store.ensureAccount('bob');
      await store.addToken(a.id, 'selector-0000001', 'f'.repeat(64));
      await store.addToken(a.id, 'selector-0000002', 'e'.repeat(64));
      await store.addToken(b.id, 'selector-0000003', 'd'.repeat(64));
      const listed = await store.listTokens(a.id);
      expect(listed.map((t) => t.selector)).toEqual(['selector-0000001', 'selector-0000002']);
      for (const t of listed) expect(Object.keys(t).sort()).toEqual(['createdAt', 'selector']);
      for (const t of listed) expect(new Date(t.createdAt).toISOString()).toBe(t.createdAt);
      // Another account's selector is not this account's to revoke.
      expect(await store.revokeToken(a.id, 'selector-0000003')).toBe(false);
      expect(await store.revokeToken(a.id, 'selector-0000001')).toBe(true);
      expect(await store.revokeToken(a.id, 'selector-0000001')).toBe(false);
      expect(await store.tokenBySelector('selector-0000001')).toBeNull();
      expect((await store.listTokens(a.id)).map((t) => t.selector)).toEqual(['selector-0000002']);
      expect(await store.tokenBySelector('selector-0000003')).not.toBeNull();
    });

    it('round-trips the pinned version, back to null too, also as seen through a token', async () => {
      const a = await store.ensureAccount('alice');
      await store.addToken(a.id, 'selector-0000001', 'f'.repeat(64));
      await store.setPinnedVersion(a.id, 1);
      expect((await store.ensureAccount('alice')).pinnedVersion).toBe(1);
      expect((await store.tokenBySelector('selector-0000001'))!.account.pinnedVersion).toBe(1);
      await store.setPinnedVersion(a.id, null);
      expect((await store.ensureAccount('alice')).pinnedVersion).toBeNull();
    });
  });
}
