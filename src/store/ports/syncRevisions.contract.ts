/**
 * The synchronous revision read's behaviour, one suite for every adapter offering it:
 * it answers what `orderRevision` answers, at once, with nothing cached.
 */
import type { Orders } from './orders';
import { hasSyncRevisions, type SyncRevisions } from './syncRevisions';
import { fields, setNote, type Closable, type MakesAccounts } from './fixtures.contract';

export type SyncRevisionsStore = SyncRevisions & Orders & MakesAccounts & Closable;
/** Two migrated handles on one store (`b` writes what `a` must see); `close` closes both. */
export type SyncRevisionsFactory = () => Promise<{ a: SyncRevisionsStore; b: Orders; close(): Promise<void> }>;

export function runSyncRevisionsContract(name: string, pair: SyncRevisionsFactory): void {
  describe(`SyncRevisions contract: ${name}`, () => {
    let made: Awaited<ReturnType<SyncRevisionsFactory>>;
    beforeEach(async () => {
      made = await pair();
    });
    afterEach(() => made.close());

    it('is recognised by hasSyncRevisions', () => {
      expect(hasSyncRevisions(made.a)).toBe(true);
    });

    it('answers what orderRevision answers, scoped by account, null when missing', async () => {
      const { a } = made;
      const alice = await a.ensureAccount('alice');
      const bob = await a.ensureAccount('bob');
      const { order } = await a.createOrder(alice.id, fields());
      expect(a.orderRevisionNow(alice.id, order.id)).toBe(1);
      await a.writeOrder(alice.id, order.id, setNote('changed'));
      expect(a.orderRevisionNow(alice.id, order.id)).toBe(2);
      expect(a.orderRevisionNow(alice.id, order.id)).toBe(await a.orderRevision(alice.id, order.id));
      expect(a.orderRevisionNow(bob.id, order.id)).toBeNull();
      expect(a.orderRevisionNow(alice.id, order.id + 1000)).toBeNull();
    });

    it('sees at once what another handle on the same store wrote (nothing cached)', async () => {
      const { a, b } = made;
      const alice = await a.ensureAccount('alice');
      const { order } = await a.createOrder(alice.id, fields());
      expect(a.orderRevisionNow(alice.id, order.id)).toBe(1);
      await b.writeOrder(alice.id, order.id, setNote('from b'));
      expect(a.orderRevisionNow(alice.id, order.id)).toBe(2);
    });
  });
}
