import fc from 'fast-check';
import { MemoryBuckets, type Buckets } from '../limits';
import { rateLimiter } from './rateLimit';

describe('rateLimiter (the Koa-free core)', () => {
  it('decides synchronously on in-process buckets, with the IETF field values, refusing exactly past the burst (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 10 }), fc.integer({ min: 0, max: 40 }), (burst, rps, n) => {
        const limiter = rateLimiter({ buckets: new MemoryBuckets(() => 5000), rps, burst });
        for (let i = 1; i <= n; i++) {
          const d = limiter.take(1);
          if (d instanceof Promise) throw new Error('in-process buckets answered with a promise');
          const w = Math.max(1, Math.ceil(burst / rps));
          expect(d.headers['RateLimit-Policy']).toBe(`"rest";q=${burst};w=${w}`);
          expect(d.admitted).toBe(i <= burst);
          const remaining = Math.max(0, burst - i);
          expect(d.headers.RateLimit).toBe(`"rest";r=${remaining};t=${Math.ceil(Math.ceil(((burst - remaining) * 1000) / rps) / 1000)}`);
          if (d.admitted) expect(d.headers['Retry-After']).toBeUndefined();
          else expect(d.headers['Retry-After']).toBe(String(Math.max(1, Math.ceil(Math.ceil(1000 / rps) / 1000))));
        }
      }),
    );
  });

  it('waits for buckets that need I/O (the Redis adapter) and keeps accounts apart', async () => {
    const local = new MemoryBuckets(() => 0);
    const remote: Buckets = { take: (key, cost, policy) => local.take(key, cost, policy) };
    const limiter = rateLimiter({ buckets: remote, rps: 1, burst: 1 });
    const first = limiter.take(1);
    expect(first).toBeInstanceOf(Promise);
    expect((await first).admitted).toBe(true);
    expect((await limiter.take(1)).admitted).toBe(false);
    expect((await limiter.take(2)).admitted).toBe(true);
  });

  it('spend + pushFields give the edge the same admission and field values as take (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 10 }), fc.array(fc.nat({ max: 3000 }), { maxLength: 40 }), (burst, rps, steps) => {
        let now = 0;
        const viaTake = rateLimiter({ buckets: new MemoryBuckets(() => now), rps, burst });
        const viaSpend = rateLimiter({ buckets: new MemoryBuckets(() => now), rps, burst });
        for (const step of steps) {
          now += step;
          const d = viaTake.take(1);
          const taken = viaSpend.spend(1);
          if (d instanceof Promise || taken instanceof Promise) throw new Error('in-process buckets answered with a promise');
          expect(taken.admitted).toBe(d.admitted);
          const fields: string[] = [];
          viaSpend.pushFields(fields, taken);
          expect(fields).toEqual(['RateLimit-Policy', d.headers['RateLimit-Policy'], 'RateLimit', d.headers.RateLimit]);
        }
      }),
    );
  });
});
