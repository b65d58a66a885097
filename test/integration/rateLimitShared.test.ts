/**
 * The per-account REST rate limit shared in Redis: two app instances, each with its own Redis
 * connection and RedisBuckets, admit together no more than one bucket allows. Needs Redis
 * (REDIS_TEST_URL); the fake clock keeps it independent of the machine's speed.
 */
import fc from 'fast-check';
import { startTwoInstances, type TwoInstances } from '../support/twoInstances';

describe('REST rate limit across two instances sharing Redis', () => {
  let two: TwoInstances;
  beforeAll(async () => {
    two = await startTwoInstances({ RATE_LIMIT_RPS: '3', RATE_LIMIT_BURST: '7' });
  });
  afterAll(() => two.close());

  it('admits in total what one bucket allows, however requests spread over the instances and time (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ onB: fc.boolean(), wait: fc.nat({ max: 800 }), burst: fc.integer({ min: 1, max: 4 }) }), { minLength: 1, maxLength: 12 }), async (steps) => {
        two.newPrefix();
        const start = two.clock.now;
        let admitted = 0;
        let sent = 0;
        for (const { onB, wait, burst } of steps) {
          two.clock.now += wait;
          const url = onB ? two.bUrl : two.a.url;
          const answers = await Promise.all(Array.from({ length: burst }, () => fetch(`${url}/orders?limit=1`, { headers: { authorization: `Bearer ${two.a.alice.token}` } })));
          sent += burst;
          for (const res of answers) {
            expect([200, 429]).toContain(res.status);
            if (res.status === 200) admitted++;
            await res.arrayBuffer();
          }
        }
        const budget = 7 + Math.floor(((two.clock.now - start) * 3) / 1000);
        expect(admitted).toBeLessThanOrEqual(budget);
        // And the limit is not stricter than the bucket: the first 7 are always admitted.
        expect(admitted).toBeGreaterThanOrEqual(Math.min(7, sent));
      }),
      { numRuns: 15 },
    );
  });
});
