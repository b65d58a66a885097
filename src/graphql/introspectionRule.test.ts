import fc from 'fast-check';
import { getIntrospectionQuery, specifiedRules } from 'graphql';
import { introspectionRule, MAX_INTROSPECTION_ROOTS } from './introspectionRule';
import { check } from './testSchema';

const rule = [introspectionRule];
const messages = (query: string) => check(query, rule).map((e) => [e.message, e.extensions.code]);

describe('introspectionRule', () => {
  it('admits the standard introspection queries, with every option, and the whole of graphql-js’s validation with them', () => {
    for (const options of [{}, { descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true, oneOf: true }]) {
      expect(check(getIntrospectionQuery(options), [...specifiedRules, introspectionRule])).toEqual([]);
    }
    expect(check('{ __schema { queryType { name } } __type(name: "Order") { name fields { name } } viewer { name } }', rule)).toEqual([]);
  });

  it(`refuses more than ${MAX_INTROSPECTION_ROOTS} introspection root fields, aliased, in fragments or inline; the same response key twice is one`, () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 80 }), fc.constantFrom('plain', 'fragment', 'inline'), (n, how) => {
        const roots = Array.from({ length: n }, (_, i) => (i % 2 ? `t${i}: __type(name: "Order") { name }` : `s${i}: __schema { queryType { name } }`)).join(' ');
        const query = how === 'plain' ? `{ ${roots} }` : how === 'inline' ? `{ ... on Query { ${roots} } }` : `{ ...R ...R } fragment R on Query { ${roots} }`;
        const errors = messages(query);
        if (n <= MAX_INTROSPECTION_ROOTS) expect(errors).toEqual([]);
        else expect(errors).toEqual([[`The operation selects ${n} introspection fields (__schema, __type): at most ${MAX_INTROSPECTION_ROOTS} per operation`, 'GRAPHQL_VALIDATION_FAILED']]);
      }),
    );
    expect(messages('{ __schema { types { name } } __schema { queryType { name } } __schema { directives { name } } }')).toEqual([]);
  });

  it('refuses a field aliased to another name anywhere below an introspection root, through fragments, reported once', () => {
    const aliased = [
      '{ __schema { a: types { name } b: types { name } } }',
      '{ __schema { types { fields { a: args { name } } } } }',
      '{ __schema { ...S } } fragment S on __Schema { types { ...T } } fragment T on __Type { n: name }',
      '{ __type(name: "Order") { ... on __Type { fields { x: type { name } } } } }',
      '{ __schema { ...S } __type(name: "User") { ...T } } fragment S on __Schema { types { ...T } } fragment T on __Type { n: name }',
    ];
    for (const query of aliased) {
      const errors = messages(query);
      expect({ query, errors: errors.length }).toEqual({ query, errors: 1 });
      expect(errors[0][0]).toMatch(/^Introspection fields may not be aliased \(\w+: \w+\): each is answered once$/);
    }
    // An alias that is the field's own name asks nothing twice; aliases outside introspection are the cost rule's.
    expect(messages('{ __schema { types: types { name: name } } a: viewer { name } b: viewer { name } }')).toEqual([]);
  });

  it('walks a fragment cycle and a fragment spread many times without looping (graphql-js reports the cycle)', () => {
    expect(messages('{ __schema { ...A } } fragment A on __Schema { ...B } fragment B on __Schema { ...A types { name } }')).toEqual([]);
    expect(messages('{ ...Q ...Q } fragment Q on Query { ...Q __schema { types { name } } }')).toEqual([]);
  });
});
