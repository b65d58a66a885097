import fc from 'fast-check';
import { parse, validate } from 'graphql';
import { graphqlRules } from './rules';
import { contractSchema } from './testSchema';

const messages = (text: string) => validate(contractSchema, parse(text), graphqlRules).map((e) => e.message);
const REFUSED = /^(Subscription "S"|Anonymous Subscription) must not use `@skip` or `@include` directives in the top level selection\.$/;

describe('subscriptionRootRule (in graphqlRules, for SingleFieldSubscriptionsRule)', () => {
  it('refuses @skip or @include at a subscription top level, on the field or on a fragment holding it, literal or variable, named or not (generated)', () => {
    const directive = fc.tuple(fc.constantFrom('skip', 'include'), fc.constantFrom('true', 'false', '$c')).map(([name, value]) => `@${name}(if: ${value})`);
    const shape = fc.constantFrom(
      (d: string) => ({ top: `orderEvents(id: "1") ${d} { seq }`, fragments: '' }),
      (d: string) => ({ top: `... on Subscription ${d} { orderEvents(id: "1") { seq } }`, fragments: '' }),
      (d: string) => ({ top: `... on Subscription { orderEvents(id: "1") ${d} { seq } }`, fragments: '' }),
      (d: string) => ({ top: `...F ${d}`, fragments: 'fragment F on Subscription { orderEvents(id: "1") { seq } }' }),
      (d: string) => ({ top: '...F', fragments: `fragment F on Subscription { ...G } fragment G on Subscription { orderEvents(id: "1") ${d} { seq } }` }),
    );
    fc.assert(
      fc.property(directive, shape, fc.boolean(), (d, make, named) => {
        const { top, fragments } = make(d);
        const head = `subscription${named ? ' S' : ''}${d.includes('$c') ? '($c: Boolean = true)' : ''}`;
        // Never a throw (graphql-js 16's own rule throws on `@include(if: $var)` at the top level).
        expect(messages(`${head} { ${top} } ${fragments}`)).toEqual([expect.stringMatching(REFUSED)]);
      }),
    );
  });

  it('keeps graphql-js checks: one root field, no introspection root; directives below the top level are fine', () => {
    expect(messages('subscription { orderEvents(id: "1") { seq order @skip(if: true) { id } } }')).toEqual([]);
    expect(messages('subscription S { a: orderEvents(id: "1") { seq } b: orderEvents(id: "2") { seq } }')).toEqual(['Subscription "S" must select only one top level field.']);
    expect(messages('subscription { __typename }')).toEqual(['Anonymous Subscription must not select an introspection top level field.']);
    expect(messages('query { viewer @skip(if: true) { id } }')).toEqual([]);
  });

  it('a fragment that spreads itself is walked once (its cycle is graphql-js NoFragmentCyclesRule error)', () => {
    expect(messages('subscription { ...F } fragment F on Subscription { ...F }')).toContain('Cannot spread fragment "F" within itself.');
    expect(messages('subscription { ...F } fragment F on Subscription { ...G } fragment G on Subscription { ...F @skip(if: true) }')).toContain(
      'Anonymous Subscription must not use `@skip` or `@include` directives in the top level selection.',
    );
  });
});
