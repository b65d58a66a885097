import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ORDER_ID_MAX, parseCanonicalInteger, parseOrderId } from './orderId';

/** The reference reading: a digit string that prints back as itself and lies in 1..MAX. */
const canonical = (text: string): number | null => {
  if (!/^[0-9]+$/.test(text)) return null;
  const n = Number(text);
  return String(n) === text && n >= 1 && n <= Number.MAX_SAFE_INTEGER ? n : null;
};

describe('parseOrderId', () => {
  it('reads back every id in the contract range', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (id) => expect(parseOrderId(String(id))).toBe(id)));
  });

  it('takes the bound from the contract: orderId is 1..maximum', () => {
    const openapi = readFileSync(join(__dirname, '../../contracts/openapi.yaml'), 'utf8');
    const param = /\n {4}OrderId:\n(?:.*\n)*? {6}schema:\n {8}type: integer\n {8}minimum: (\d+)\n {8}maximum: (\d+)\n/.exec(openapi);
    expect(param).not.toBeNull();
    expect(Number(param![1])).toBe(1);
    expect(Number(param![2])).toBe(ORDER_ID_MAX);
    expect(ORDER_ID_MAX).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('accepts the bound and nothing past it', () => {
    expect(parseOrderId('9007199254740991')).toBe(ORDER_ID_MAX);
    for (const text of ['9007199254740992', '9007199254740993', '9999999999999999', '10000000000000000']) expect(parseOrderId(text)).toBeNull();
  });

  it('refuses every other spelling', () => {
    for (const text of ['', '0', '00', '01', '-1', '+1', '1.', '1.0', '1e3', ' 1', '1 ', '0x10', '١', '1_000']) expect(parseOrderId(text)).toBeNull();
  });

  it('agrees with the reference on generated digit-like text (generated)', () => {
    const unit = fc.constantFrom('0', '1', '5', '9', '-', '+', '.', 'e', ' ', 'x');
    fc.assert(fc.property(fc.string({ unit, maxLength: 18 }), (text) => expect(parseOrderId(text)).toBe(canonical(text))));
    fc.assert(fc.property(fc.string(), (text) => expect(parseOrderId(text)).toBe(canonical(text))));
    // Around the bound, where the shape and the value disagree.
    fc.assert(fc.property(fc.bigInt({ min: 9_000_000_000_000_000n, max: 10_000_000_000_000_000n }), (n) => expect(parseOrderId(String(n))).toBe(canonical(String(n)))));
  });
});

describe('parseCanonicalInteger, the one reading of an integer as text (ids are its positive values)', () => {
  /** The reference reading: text that prints back as itself and is a safe integer. */
  const reference = (text: string): number | null => {
    if (!/^-?[0-9]+$/.test(text)) return null;
    const n = Number(text);
    return String(n) === text && Number.isSafeInteger(n) ? n : null;
  };
  it('reads back every safe integer and agrees with the reference on generated text (generated)', () => {
    fc.assert(fc.property(fc.maxSafeInteger(), (n) => expect(parseCanonicalInteger(String(n))).toBe(n)));
    const unit = fc.constantFrom('0', '1', '5', '9', '-', '+', '.', 'e', ' ', 'x');
    fc.assert(fc.property(fc.string({ unit, maxLength: 20 }), (text) => expect(parseCanonicalInteger(text)).toBe(reference(text))));
    fc.assert(fc.property(fc.bigInt({ min: -10_000_000_000_000_000n, max: 10_000_000_000_000_000n }), (n) => expect(parseCanonicalInteger(String(n))).toBe(reference(String(n)))));
  });
  it('an order id is exactly a positive canonical integer (generated)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('0', '1', '9', '-', '.'), maxLength: 18 }), (text) => {
        const n = parseCanonicalInteger(text);
        expect(parseOrderId(text)).toBe(n !== null && n >= 1 ? n : null);
      }),
    );
  });
});
