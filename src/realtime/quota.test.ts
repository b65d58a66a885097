import fc from 'fast-check';
import { StreamQuota } from './quota';

describe('StreamQuota', () => {
  it('admits at most max streams per account at once, each account on its own; 0 is no cap (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4 }), fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 3 })), { maxLength: 60 }), (max, steps) => {
        const quota = new StreamQuota(max);
        const model = new Map<number, number>();
        for (const [take, account] of steps) {
          const held = model.get(account) ?? 0;
          if (take) {
            const admitted = max === 0 || held < max;
            expect(quota.take(account)).toBe(admitted);
            if (admitted) model.set(account, held + 1);
          } else if (held > 0) {
            quota.release(account);
            model.set(account, held - 1);
          }
          expect(quota.held(account)).toBe(model.get(account) ?? 0);
        }
      }),
    );
  });

  it('refuses with 429 RATE_LIMITED and a Retry-After', () => {
    expect(new StreamQuota(2).refusal()).toMatchObject({ problem: { status: 429, code: 'RATE_LIMITED' }, headers: { 'Retry-After': expect.stringMatching(/^\d+$/) } });
  });
});
