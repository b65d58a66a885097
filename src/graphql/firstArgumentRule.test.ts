import fc from 'fast-check';
import { firstArgumentRule, MAX_FIRST } from './firstArgumentRule';
import { check } from './testSchema';

describe('firstArgumentRule', () => {
  it('accepts 0..MAX_FIRST and refuses anything else, literal or variable (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.boolean(), (n, viaVariable) => {
        const q = viaVariable ? 'query Q($n: Int) { user(id: "u1") { friends(first: $n) { id } } }' : `{ user(id: "u1") { friends(first: ${n}) { id } } }`;
        const errors = check(q, [firstArgumentRule(viaVariable ? { n } : {})]);
        const ok = n >= 0 && n <= MAX_FIRST;
        expect(errors.length === 0).toBe(ok);
        if (!ok) expect(errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      }),
    );
  });

  it('checks a variable default when no value is sent', () => {
    expect(check('query Q($n: Int = 500) { user(id: "u1") { friends(first: $n) { id } } }', [firstArgumentRule({})])).toHaveLength(1);
  });
});
