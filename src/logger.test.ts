import fc from 'fast-check';
import { throttle } from './logger';

describe('throttle', () => {
  it('lets the first line through, then one per window, each counting the lines left out since the last (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 200 }), (everyMs, gaps) => {
        let t = 1_000_000;
        const gate = throttle(everyMs, () => t);
        let lastPass: number | undefined;
        let leftOut = 0;
        for (const gap of gaps) {
          t += gap;
          const r = gate();
          const due = lastPass === undefined || t - lastPass >= everyMs;
          expect(r !== undefined).toBe(due);
          if (r) {
            expect(r.suppressed).toBe(leftOut);
            lastPass = t;
            leftOut = 0;
          } else leftOut++;
        }
      }),
    );
  });
});
