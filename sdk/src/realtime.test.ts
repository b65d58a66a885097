import fc from 'fast-check';
import { reconnectDelay } from './realtime';

describe('reconnectDelay', () => {
  it('is base x 2^attempt + random(0, base), capped (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 600_000 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (attempt, baseMs, capMs, r) => {
        const d = reconnectDelay(attempt, { baseMs, capMs }, () => r);
        expect(d).toBeCloseTo(Math.min(capMs, baseMs * 2 ** attempt + r * baseMs), 6);
        expect(d).toBeLessThanOrEqual(capMs);
      }),
    );
  });

  it('jitters the first reconnect too: a fleet dropped at once spreads over [base, 2 x base)', () => {
    const delays = Array.from({ length: 1000 }, () => reconnectDelay(0, { baseMs: 100, capMs: 10_000 }));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(100);
    expect(Math.max(...delays)).toBeLessThan(200);
    expect(new Set(delays.map((d) => Math.floor(d / 10))).size).toBeGreaterThan(5);
  });
});
