/**
 * The synchronous take's behaviour (`SyncBuckets`), one suite for every adapter
 * offering it: `take`'s contract, answered without a promise, on the same buckets.
 * Time is a fake clock the factory hands to the adapter: no test waits.
 */
import { hasSyncBuckets, type Buckets, type SyncBuckets } from './buckets';

export interface SyncBucketsFactory {
  (now: () => number): Promise<{ buckets: Buckets & SyncBuckets; close(): Promise<void> }>;
}

export function runSyncBucketsContract(name: string, make: SyncBucketsFactory): void {
  describe(`SyncBuckets contract: ${name}`, () => {
    let t: number;
    let made: Awaited<ReturnType<SyncBucketsFactory>>;
    const key = () => `k${Math.random().toString(36).slice(2)}`;
    beforeEach(async () => {
      t = 1_700_000_000_000;
      made = await make(() => t);
    });
    afterEach(() => made.close());

    it('is recognised by hasSyncBuckets', () => {
      expect(hasSyncBuckets(made.buckets)).toBe(true);
    });

    it('admits a full burst, then refuses with the wait for one token, without a promise', () => {
      const k = key();
      const policy = { capacity: 3, ratePerSec: 2 };
      const got = Array.from({ length: 4 }, () => made.buckets.takeNow(k, 1, policy));
      for (const r of got) expect(r).not.toBeInstanceOf(Promise);
      expect(got.map((r) => [r.admitted, r.remaining])).toEqual([
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
      ]);
      expect(got[3]).toMatchObject({ retryAfterMs: 500, fullInMs: 1500 });
    });

    it('refuses a cost that does not fit without charging it, and refills at the rate', () => {
      const k = key();
      const policy = { capacity: 100, ratePerSec: 10 };
      made.buckets.takeNow(k, 70, policy);
      expect(made.buckets.takeNow(k, 40, policy)).toMatchObject({ admitted: false, remaining: 30, retryAfterMs: 1000 });
      t += 1000;
      expect(made.buckets.takeNow(k, 40, policy)).toMatchObject({ admitted: true, remaining: 0 });
    });

    it('spends the same buckets as take: tokens taken by one are gone for the other', async () => {
      const k = key();
      const policy = { capacity: 4, ratePerSec: 1 };
      expect(made.buckets.takeNow(k, 3, policy)).toMatchObject({ admitted: true, remaining: 1 });
      expect(await made.buckets.take(k, 1, policy)).toMatchObject({ admitted: true, remaining: 0 });
      expect(made.buckets.takeNow(k, 1, policy)).toMatchObject({ admitted: false, remaining: 0 });
    });
  });
}
