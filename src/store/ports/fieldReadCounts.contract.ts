/**
 * The field-read counts port's behaviour, one suite for every adapter. `pair` opens a
 * store on fresh data and a second handle on the same data (another pool or file
 * handle: another worker or instance), both migrated.
 */
import type { FieldReadCounts, FieldReads } from './fieldReadCounts';
import type { MakesAccounts } from './fixtures.contract';

export type FieldReadCountsStore = FieldReadCounts & MakesAccounts;
export type FieldReadCountsFactory = () => Promise<{ a: FieldReadCountsStore; b: FieldReadCountsStore; close: () => Promise<void> }>;

const F = 'discount_code';

export function runFieldReadCountsContract(name: string, pair: FieldReadCountsFactory): void {
  describe(`FieldReadCounts contract: ${name}`, () => {
    let a: FieldReadCountsStore;
    let b: FieldReadCountsStore;
    let close: () => Promise<void>;
    let alice: number;
    let bob: number;
    const reads = (accountId: number, n: number, day = '2026-03-01', field = F): FieldReads => ({ accountId, field, day, reads: n });
    beforeEach(async () => {
      ({ a, b, close } = await pair());
      alice = (await a.ensureAccount('alice')).id;
      bob = (await a.ensureAccount('bob')).id;
    });
    afterEach(() => close());

    it('starts empty, and adds batches to the stored counts (repeated keys in one batch add up)', async () => {
      expect(await a.fieldReadTotals('2000-01-01', 10)).toEqual([]);
      await a.addFieldReads([reads(alice, 3), reads(bob, 1), reads(alice, 2)]);
      await a.addFieldReads([reads(bob, 7)]);
      await a.addFieldReads([]);
      expect(await a.fieldReadTotals('2000-01-01', 10)).toEqual([
        { account: 'bob', field: F, reads: 8 },
        { account: 'alice', field: F, reads: 5 },
      ]);
    });

    it('sums the days from sinceDay on (inclusive), per account and field', async () => {
      await a.addFieldReads([reads(alice, 1, '2026-02-28'), reads(alice, 2, '2026-03-01'), reads(alice, 4, '2026-03-02'), reads(alice, 8, '2026-03-02', 'other_field')]);
      expect(await a.fieldReadTotals('2026-03-01', 10)).toEqual([
        { account: 'alice', field: 'other_field', reads: 8 },
        { account: 'alice', field: F, reads: 6 },
      ]);
      expect(await a.fieldReadTotals('2026-01-01', 10)).toContainEqual({ account: 'alice', field: F, reads: 7 });
      expect(await a.fieldReadTotals('2026-03-03', 10)).toEqual([]);
    });

    it('orders by reads, then account name and field, and answers at most limit rows', async () => {
      const carol = (await a.ensureAccount('carol')).id;
      await a.addFieldReads([reads(carol, 2), reads(bob, 2), reads(alice, 9), reads(alice, 2, '2026-03-01', 'a_field')]);
      expect(await a.fieldReadTotals('2000-01-01', 10)).toEqual([
        { account: 'alice', field: F, reads: 9 },
        { account: 'alice', field: 'a_field', reads: 2 },
        { account: 'bob', field: F, reads: 2 },
        { account: 'carol', field: F, reads: 2 },
      ]);
      expect(await a.fieldReadTotals('2000-01-01', 2)).toEqual([
        { account: 'alice', field: F, reads: 9 },
        { account: 'alice', field: 'a_field', reads: 2 },
      ]);
    });

    it('stores nothing of a batch with an unknown account', async () => {
      await a.addFieldReads([reads(alice, 1)]);
      // Not `rejects.toThrow()`: a driver's error class may come from another jest realm (better-sqlite3's native module is loaded once per worker).
      expect(
        await a.addFieldReads([reads(alice, 5), reads(bob + 1000, 1)]).then(
          () => 'stored',
          () => 'refused',
        ),
      ).toBe('refused');
      expect(await a.fieldReadTotals('2000-01-01', 10)).toEqual([{ account: 'alice', field: F, reads: 1 }]);
    });

    it('loses no count when two handles add to the same keys at once', async () => {
      const batches = Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).addFieldReads([reads(alice, 1), reads(bob, 2)]));
      await Promise.all(batches);
      expect(await b.fieldReadTotals('2000-01-01', 10)).toEqual([
        { account: 'bob', field: F, reads: 40 },
        { account: 'alice', field: F, reads: 20 },
      ]);
    });
  });
}
