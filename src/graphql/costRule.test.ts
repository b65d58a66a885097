import fc from 'fast-check';
import { parse, getOperationAST, ValidationContext, TypeInfo } from 'graphql';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { costRule, operationCost, ORDER_ITEMS_MAX, simplifiedCost } from './costRule';
import { check, contractSchema } from './testSchema';

const rule = costRule({ maxCost: 1000 });
const costOf = (query: string, variables?: Record<string, unknown>): number => {
  const doc = parse(query);
  const ctx = new ValidationContext(contractSchema, doc, new TypeInfo(contractSchema), () => undefined);
  return operationCost(ctx, getOperationAST(doc)!, variables);
};

describe('costRule: the documented figures (522 accepted, 3222 refused)', () => {
  it('simplified estimate objectCost x listFactor^d: 200 (d=2), 2000 (d=3), 20000 (d=4)', () => {
    expect([2, 3, 4].map((d) => simplifiedCost(d))).toEqual([200, 2000, 20000]);
    // and the decision drawn from them, against the ceiling
    expect([2, 3, 4].map((d) => simplifiedCost(d) <= 1000)).toEqual([true, false, false]);
  });

  it('exact: user{posts{comments{author{name}}}} costs 522 and is accepted', () => {
    const q = '{ user(id: "u1") { posts { comments { author { name } } } } }';
    expect(costOf(q)).toBe(522);
    expect(check(q, [rule])).toEqual([]);
  });

  it("an order's items, served whole, are priced at the most an order holds (the contract's maxItems), not at the page size", () => {
    const openapi = YAML.parse(readFileSync(join(__dirname, '../../contracts/openapi.yaml'), 'utf8')) as { components: { schemas: Record<string, { properties: { items: { maxItems: number } } }> } };
    for (const schema of ['OrderCreateV1', 'OrderCreateV2']) expect(openapi.components.schemas[schema].properties.items.maxItems).toBe(ORDER_ITEMS_MAX);
    // order 2 + items 100 x (2 + 3 scalars)
    expect(costOf('{ order(id: "1") { items { sku quantity unitPriceCents } } }')).toBe(2 + 100 * (2 + 3));
    // 19 orders of 100 items each: 1900 items, no longer admitted as 990 points
    expect(costOf('{ viewer { orders(first: 19) { items { sku quantity unitPriceCents } } } }')).toBe(2 + 19 * (2 + 100 * 5));
  });

  it('exact: user{friends{friends{friends{name}}}} costs 3222 and is rejected', () => {
    const q = '{ user(id: "u1") { friends { friends { friends { name } } } } }';
    expect(costOf(q)).toBe(3222);
    const errors = check(q, [rule]);
    expect(errors).toHaveLength(1);
    expect(errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(errors[0].extensions).not.toHaveProperty('cost');
  });

  it('a wide but shallow first: 1000 is rejected (breadth is priced, not only depth)', () => {
    const q = '{ user(id: "u1") { friends(first: 1000) { name } } }';
    expect(costOf(q)).toBe(2 + 1000 * 3);
    expect(check(q, [rule])).toHaveLength(1);
  });

  it('shows cost and ceiling in extensions only when configured', () => {
    const q = '{ user(id: "u1") { friends { friends { friends { name } } } } }';
    const [err] = check(q, [costRule({ maxCost: 1000, showCost: true })]);
    expect(err.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', cost: 3222, maxCost: 1000 });
  });
});

describe('costRule: field by field', () => {
  it('scalar 1, __typename 0, object 2 + selections, list of objects size x (2 + selections)', () => {
    expect(costOf('{ user(id: "u1") { id name __typename } }')).toBe(2 + 1 + 1);
    expect(costOf('{ user(id: "u1") { friends(first: 3) { id } } }')).toBe(2 + 3 * (2 + 1));
    expect(costOf('{ order(id: "1") { items { sku } } }')).toBe(2 + 100 * (2 + 1)); // an order's items: at most 100
  });

  it('takes first from variables, else the variable default, else listFactor', () => {
    const q = 'query Q($n: Int = 4) { user(id: "u1") { friends(first: $n) { id } } }';
    expect(costOf(q, { n: 7 })).toBe(2 + 7 * 3);
    expect(costOf(q, {})).toBe(2 + 4 * 3);
    expect(costOf('query Q($n: Int) { user(id: "u1") { friends(first: $n) { id } } }', {})).toBe(2 + 10 * 3);
  });

  it('counts aliases every time and expands fragments and inline fragments where spread', () => {
    const one = costOf('{ user(id: "u1") { friends { name } } }');
    expect(costOf('{ a: user(id: "u1") { friends { name } } b: user(id: "u2") { friends { name } } }')).toBe(2 * one);
    expect(costOf('{ user(id: "u1") { ...F ...F } } fragment F on User { friends { name } }')).toBe(2 + 2 * 30);
    expect(costOf('{ user(id: "u1") { ... on User { friends { name } } } }')).toBe(one);
  });

  it('a negative first never lowers the price (priced 0; firstArgumentRule refuses it)', () => {
    expect(costOf('{ user(id: "u1") { friends(first: -5) { name } } }')).toBe(2);
  });

  it('equals the sum of its top-level fields priced alone (additivity, generated)', () => {
    const leaf = fc.constantFrom('id', 'name');
    const field = fc.oneof(
      leaf,
      fc.integer({ min: 0, max: 20 }).map((n) => `friends(first: ${n}) { name }`),
      fc.constant('posts { title }'),
    );
    fc.assert(
      fc.property(fc.array(field, { minLength: 1, maxLength: 8 }), (fields) => {
        const aliased = fields.map((f, i) => `f${i}: ${f}`);
        const whole = costOf(`{ user(id: "u1") { ${aliased.join(' ')} } }`);
        const parts = aliased.reduce((sum, f) => sum + costOf(`{ user(id: "u1") { ${f} } }`) - 2, 2);
        expect(whole).toBe(parts);
      }),
    );
  });

  it('never throws on cycles or unknown fragments and prices exponential spreads in linear time', () => {
    expect(() => check('{ user(id: "u1") { ...A } } fragment A on User { friends { ...A } }', [rule])).not.toThrow();
    expect(() => check('{ user(id: "u1") { ...Nope } }', [rule])).not.toThrow();
    const frags = Array.from({ length: 60 }, (_, i) => `fragment F${i} on User { id ${i < 59 ? `...F${i + 1} a: friends(first: 1) { ...F${i + 1} }` : ''} }`);
    const started = Date.now();
    const errors = check(`{ user(id: "u1") { ...F0 } } ${frags.join(' ')}`, [rule]);
    expect(errors).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
