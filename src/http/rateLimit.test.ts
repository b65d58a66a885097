import fc from 'fast-check';
import { MemoryBuckets, type Buckets } from '../limits';
import { rateLimiter } from './rateLimit';

/** The fields a take gives a response: the two IETF fields when admitted, the refusal's when not. */
function fieldsOf(limiter: ReturnType<typeof rateLimiter>, taken: Parameters<ReturnType<typeof rateLimiter>['pushFields']>[1]): Record<string, string> {
  if (!taken.admitted) return { ...limiter.refusal(taken).headers };
  const fields: string[] = [];
  limiter.pushFields(fields, taken);
  return { [fields[0]]: fields[1], [fields[2]]: fields[3] };
}

describe('rateLimiter', () => {
  it('takes synchronously from in-process buckets, with the IETF field values, refusing exactly past the burst (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 10 }), fc.integer({ min: 0, max: 40 }), (burst, rps, n) => {
        const limiter = rateLimiter({ buckets: new MemoryBuckets(() => 5000), rps, burst });
        if (!limiter.spendNow) throw new Error('in-process buckets have no synchronous take');
        for (let i = 1; i <= n; i++) {
          const taken = limiter.spendNow(1);
          const headers = fieldsOf(limiter, taken);
          const w = Math.max(1, Math.ceil(burst / rps));
          expect(headers['RateLimit-Policy']).toBe(`"rest";q=${burst};w=${w}`);
          expect(taken.admitted).toBe(i <= burst);
          const remaining = Math.max(0, burst - i);
          expect(headers.RateLimit).toBe(`"rest";r=${remaining};t=${Math.ceil(Math.ceil(((burst - remaining) * 1000) / rps) / 1000)}`);
          if (taken.admitted) expect(headers['Retry-After']).toBeUndefined();
          else {
            expect(headers['Retry-After']).toBe(String(Math.max(1, Math.ceil(Math.ceil(1000 / rps) / 1000))));
            expect(limiter.refusal(taken).problem).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
          }
        }
      }),
    );
  });

  it('waits for buckets that need I/O (the Redis adapter) and keeps accounts apart', async () => {
    const local = new MemoryBuckets(() => 0);
    const remote: Buckets = { take: (key, cost, policy) => local.take(key, cost, policy) };
    const limiter = rateLimiter({ buckets: remote, rps: 1, burst: 1 });
    expect(limiter.spendNow).toBeUndefined();
    expect((await limiter.spend(1)).admitted).toBe(true);
    expect((await limiter.spend(1)).admitted).toBe(false);
    expect((await limiter.spend(2)).admitted).toBe(true);
  });

  it('spendNow and spend give the same admissions and fields over generated clocks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 10 }), fc.array(fc.nat({ max: 3000 }), { maxLength: 40 }), async (burst, rps, steps) => {
        let now = 0;
        const sync = rateLimiter({ buckets: new MemoryBuckets(() => now), rps, burst });
        const local = new MemoryBuckets(() => now);
        const viaPromise = rateLimiter({ buckets: { take: (k, c, p) => local.take(k, c, p) }, rps, burst });
        for (const step of steps) {
          now += step;
          const a = sync.spendNow!(1);
          const b = await viaPromise.spend(1);
          expect(fieldsOf(sync, a)).toEqual(fieldsOf(viaPromise, b));
        }
      }),
    );
  });
});
