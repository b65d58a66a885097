import fc from 'fast-check';
import { RestartPolicy, type RestartPolicyOptions } from './restartPolicy';

const opts: RestartPolicyOptions = { baseMs: 1000, maxMs: 30_000, stableMs: 10_000, maxEarlyDeaths: 5 };

describe('RestartPolicy', () => {
  it('gives up after maxEarlyDeaths early deaths in a row, with doubling delays before that', () => {
    const policy = new RestartPolicy(opts);
    expect([1, 2, 3, 4].map(() => policy.died(50))).toEqual([1000, 2000, 4000, 8000].map((delayMs) => ({ restart: true, delayMs })));
    expect(policy.died(50)).toEqual({ restart: false, earlyDeaths: 5 });
  });

  it('a worker that lived past stableMs ends the run: the next early death starts from the base delay again', () => {
    const policy = new RestartPolicy(opts);
    policy.died(10);
    policy.died(10);
    expect(policy.died(60_000)).toEqual({ restart: true, delayMs: 1000 });
    expect(policy.died(10)).toEqual({ restart: true, delayMs: 1000 });
  });

  it('for any life spans: it stops exactly at the first run of maxEarlyDeaths early deaths, and every delay is within [base, max]', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20_000 }), { maxLength: 40 }), (lives) => {
        const policy = new RestartPolicy({ ...opts, maxMs: 5000 });
        let run = 0;
        for (const lived of lives) {
          run = lived >= opts.stableMs ? 0 : run + 1;
          const decision = policy.died(lived);
          if (run >= opts.maxEarlyDeaths) {
            expect(decision).toEqual({ restart: false, earlyDeaths: run });
            return;
          }
          expect(decision.restart).toBe(true);
          if (decision.restart) {
            expect(decision.delayMs).toBeGreaterThanOrEqual(1000);
            expect(decision.delayMs).toBeLessThanOrEqual(5000);
          }
        }
      }),
    );
  });
});
