import fc from 'fast-check';
import { AcceptLimiter } from './acceptLimiter';

describe('AcceptLimiter', () => {
  it('lets a burst through, then the rate, and says when to retry', () => {
    let now = 0;
    const lim = new AcceptLimiter(2, 3, () => now);
    expect([lim.take(), lim.take(), lim.take()].every((r) => r.ok)).toBe(true);
    expect(lim.take()).toEqual({ ok: false, retryAfterS: 1 });
    now += 500; // one token back at 2/s
    expect(lim.take().ok).toBe(true);
    expect(lim.take().ok).toBe(false);
  });

  it('peek answers what take would, spending nothing and promising no place', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 20 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 300 }), fc.boolean()), { maxLength: 200 }), (rate, burst, steps) => {
        let now = 0;
        const lim = new AcceptLimiter(rate, burst, () => now);
        const twin = new AcceptLimiter(rate, burst, () => now); // the same schedule of takes, no peeks
        for (const [gap, peekFirst] of steps) {
          now += gap;
          if (peekFirst) {
            const peeked = lim.peek();
            expect(lim.peek()).toEqual(peeked); // asking twice changes nothing
          }
          expect(lim.take()).toEqual(twin.take());
        }
      }),
    );
  });

  it('never admits more than burst + rate x elapsed (generated schedules)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 100 }), fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 300 }), (rate, burst, gaps) => {
        let now = 0;
        const lim = new AcceptLimiter(rate, burst, () => now);
        let admitted = 0;
        for (const g of gaps) {
          now += g;
          if (lim.take().ok) admitted++;
        }
        expect(admitted).toBeLessThanOrEqual(burst + Math.floor((now / 1000) * rate) + 1e-9);
      }),
    );
  });
});
