import fc from 'fast-check';
import { getOperationAST, parse } from 'graphql';
import { MemoryBuckets } from '../limits';
import { costBudget } from './costBudget';
import { contractSchema } from './testSchema';

/** Operations and their exact costs (costRule.ts's formula). */
const OPS: [string, number][] = [
  ['{ viewer { id name } }', 4],
  ['{ user(id: "u1") { friends(first: 5) { id } } }', 17],
  ['query Q($n: Int) { user(id: "u1") { posts(first: $n) { ...P } } } fragment P on Post { id title }', 0], // priced with n below
  ['{ __typename }', 0],
];

describe('costBudget', () => {
  it("charges the exact cost, refuses exactly when the bucket would go below zero, and reports Shopify's shape (generated)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ which: fc.nat({ max: OPS.length - 1 }), n: fc.nat({ max: 20 }), wait: fc.nat({ max: 1500 }) }), { maxLength: 40 }), async (steps) => {
        let t = 1_700_000_000_000;
        const budget = costBudget({ buckets: new MemoryBuckets(() => t), budget: 100, restoreRate: 10 });
        let model = 100_000; // milli-points
        for (const { which, n, wait } of steps) {
          t += wait;
          model = Math.min(100_000, model + wait * 10);
          const [text, fixed] = OPS[which];
          const cost = which === 2 ? 2 + n * (2 + 2) : fixed;
          const doc = parse(text);
          const charge = await budget.charge(7, contractSchema, doc, getOperationAST(doc)!, { n });
          expect(charge.cost.requestedQueryCost).toBe(cost);
          expect(charge.admitted).toBe(cost * 1000 <= model);
          if (charge.admitted) model -= cost * 1000;
          expect(charge.cost.throttleStatus).toEqual({ maximumAvailable: 100, currentlyAvailable: Math.floor(model / 1000), restoreRate: 10 });
          if (!charge.admitted) {
            const needed = cost * 1000 - model;
            expect(charge.retryAfterS).toBe(Math.max(1, Math.ceil(Math.ceil(needed / 10) / 1000)));
            const body = JSON.parse(charge.body);
            expect(body.errors[0].extensions).toMatchObject({ code: 'THROTTLED', requestedQueryCost: cost, retryAfterSeconds: charge.retryAfterS });
            expect(body.extensions.cost).toEqual(charge.cost);
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('prices the same operation node anew for each variable set (the price is remembered per node and variables, generated)', async () => {
    const doc = parse(OPS[2][0]);
    const op = getOperationAST(doc)!;
    const budget = costBudget({ buckets: new MemoryBuckets(() => 1000), budget: 1_000_000, restoreRate: 1 });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: 40 }), { minLength: 1, maxLength: 40 }), async (ns) => {
        for (const n of ns) expect((await budget.charge(1, contractSchema, doc, op, { n })).cost.requestedQueryCost).toBe(2 + n * 4);
        expect((await budget.charge(1, contractSchema, doc, op, {})).cost.requestedQueryCost).toBe(2 + 10 * 4); // no `first`: the list factor
      }),
      { numRuns: 30 },
    );
  });

  it('keeps accounts apart', async () => {
    const budget = costBudget({ buckets: new MemoryBuckets(() => 1000), budget: 20, restoreRate: 1 });
    const doc = parse(OPS[1][0]);
    const op = getOperationAST(doc)!;
    expect((await budget.charge(1, contractSchema, doc, op, {})).admitted).toBe(true);
    expect((await budget.charge(1, contractSchema, doc, op, {})).admitted).toBe(false);
    expect((await budget.charge(2, contractSchema, doc, op, {})).admitted).toBe(true);
  });

  it('extensionsJson writes exactly what JSON.stringify({ cost }) writes, for any budget, rate and charge (generated)', () => {
    const points = fc.oneof(fc.nat(), fc.integer({ min: 0, max: 1_000_000_000 }), fc.constantFrom(0, 1, 2 ** 31, 2 ** 53 - 1));
    fc.assert(
      fc.property(points, points, points, points, (budget, restoreRate, requestedQueryCost, currentlyAvailable) => {
        const rule = costBudget({ buckets: new MemoryBuckets(), budget, restoreRate });
        const cost = { requestedQueryCost, throttleStatus: { maximumAvailable: budget, currentlyAvailable, restoreRate } };
        expect(rule.extensionsJson(cost)).toBe(JSON.stringify({ cost }));
      }),
    );
  });
});
