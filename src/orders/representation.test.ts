import fc from 'fast-check';
import { totalCents } from './representation';

/** The contract's total in exact arithmetic: gross x (100 - percent) / 100, rounded half up. */
function exact(gross: bigint, percent: number): bigint {
  const scaled = gross * BigInt(100 - percent);
  return (scaled + 50n) / 100n; // non-negative: integer division floors
}

const line = fc.record({ sku: fc.constant('x'), quantity: fc.integer({ min: 1, max: 100_000 }), unit_price_cents: fc.integer({ min: 0, max: 100_000_000 }) });

describe('totalCents', () => {
  it('is the gross less the percent, rounded half up, exactly, over the contract’s whole range (generated)', () => {
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 100 }), fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }), (items, percent) => {
        const gross = items.reduce((sum, i) => sum + BigInt(i.quantity) * BigInt(i.unit_price_cents), 0n);
        const discount = percent === undefined ? null : { code: 'D', percent };
        expect(BigInt(totalCents({ items, discount }))).toBe(exact(gross, percent ?? 0));
      }),
    );
  });

  it('rounds a half cent up', () => {
    const one = (cents: number, percent: number) => totalCents({ items: [{ sku: 'x', quantity: 1, unit_price_cents: cents }], discount: { code: 'H', percent } });
    expect([one(1, 50), one(3, 50), one(10, 15), one(101, 50), one(2, 50)]).toEqual([1, 2, 9, 51, 1]);
  });
});
