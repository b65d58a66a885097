/**
 * The Buckets port's behaviour, one suite for every adapter (as each store port's).
 * Time is a fake clock the factory hands to the adapter: no test waits.
 */
import fc from 'fast-check';
import type { Buckets } from './buckets';

export interface BucketsFactory {
  (now: () => number): Promise<{ buckets: Buckets; close(): Promise<void> }>;
}

export function runBucketsContract(name: string, make: BucketsFactory): void {
  describe(`Buckets contract: ${name}`, () => {
    let t: number;
    let made: { buckets: Buckets; close(): Promise<void> };
    const key = () => `k${Math.random().toString(36).slice(2)}`;
    beforeEach(async () => {
      t = 1_700_000_000_000;
      made = await make(() => t);
    });
    afterEach(() => made.close());

    it('admits a full burst, then refuses with the wait for one token', async () => {
      const k = key();
      const policy = { capacity: 3, ratePerSec: 2 };
      const got = [];
      for (let i = 0; i < 4; i++) got.push(await made.buckets.take(k, 1, policy));
      expect(got.map((r) => [r.admitted, r.remaining])).toEqual([
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
      ]);
      expect(got[3]).toMatchObject({ retryAfterMs: 500, fullInMs: 1500 });
    });

    it('refills at the rate, never above capacity', async () => {
      const k = key();
      const policy = { capacity: 10, ratePerSec: 4 };
      expect(await made.buckets.take(k, 10, policy)).toMatchObject({ admitted: true, remaining: 0, fullInMs: 2500 });
      t += 249;
      expect(await made.buckets.take(k, 1, policy)).toMatchObject({ admitted: false, retryAfterMs: 1 });
      t += 1;
      expect(await made.buckets.take(k, 1, policy)).toMatchObject({ admitted: true, remaining: 0 });
      t += 3_600_000;
      expect(await made.buckets.take(k, 0, policy)).toMatchObject({ admitted: true, remaining: 10, fullInMs: 0 });
    });

    it('refuses a cost that does not fit without charging it', async () => {
      const k = key();
      const policy = { capacity: 100, ratePerSec: 10 };
      await made.buckets.take(k, 70, policy);
      expect(await made.buckets.take(k, 40, policy)).toMatchObject({ admitted: false, remaining: 30, retryAfterMs: 1000 });
      expect(await made.buckets.take(k, 30, policy)).toMatchObject({ admitted: true, remaining: 0 });
    });

    it('keeps keys apart', async () => {
      const [a, b] = [key(), key()];
      const policy = { capacity: 1, ratePerSec: 1 };
      expect((await made.buckets.take(a, 1, policy)).admitted).toBe(true);
      expect((await made.buckets.take(b, 1, policy)).admitted).toBe(true);
      expect((await made.buckets.take(a, 1, policy)).admitted).toBe(false);
    });

    it('admits exactly the tokens there are to concurrent takes', async () => {
      const k = key();
      const results = await Promise.all(Array.from({ length: 25 }, () => made.buckets.take(k, 1, { capacity: 7, ratePerSec: 1 })));
      expect(results.filter((r) => r.admitted)).toHaveLength(7);
    });

    it('never admits more than capacity + rate x elapsed, and is exactly refused when the bucket would go below zero (generated)', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.record({ capacity: fc.integer({ min: 1, max: 50 }), ratePerSec: fc.integer({ min: 1, max: 20 }) }),
          fc.array(fc.record({ wait: fc.nat({ max: 700 }), cost: fc.nat({ max: 50 }) }), { maxLength: 30 }),
          async (policy, steps) => {
            const k = key();
            const start = t;
            let model = policy.capacity * 1000; // milli-tokens, the reference model
            let spent = 0;
            for (const { wait, cost: raw } of steps) {
              const cost = Math.min(raw, policy.capacity);
              t += wait;
              model = Math.min(policy.capacity * 1000, model + wait * policy.ratePerSec);
              const r = await made.buckets.take(k, cost, policy);
              expect(r.admitted).toBe(cost * 1000 <= model);
              if (r.admitted) {
                model -= cost * 1000;
                spent += cost;
              }
              expect(r.remaining).toBe(Math.floor(model / 1000));
            }
            expect(spent).toBeLessThanOrEqual(policy.capacity + ((t - start) * policy.ratePerSec) / 1000);
          },
        ),
        { numRuns: 30 },
      );
    });
  });
}
