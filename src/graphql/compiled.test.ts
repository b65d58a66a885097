/**
 * The compiled path must answer exactly what graphql-js answers: each case runs through
 * graphql-js's `execute` and, repeated until compiled, through `compiledExecutor`, on
 * the real schema, resolvers and DataLoaders over the demo data; the serialized
 * results must be the same bytes (graphql-http serializes them as they are).
 */
import fc from 'fast-check';
import { execute, parse, type DocumentNode, type ExecutionArgs } from 'graphql';
import { SqliteStore, type Account, type Store } from '../store';
import { COMPILE_AFTER, compiledExecutor } from './compiled';
import { createLoaders } from './loaders';
import { createSchema } from './schema';

const schema = createSchema();
let store: SqliteStore;
let demo: Account;

beforeAll(async () => {
  store = new SqliteStore(':memory:');
  await store.migrate();
  await store.seedDemo();
  demo = await store.ensureAccount('demo');
});
afterAll(() => store.close());

/** A store whose `method` fails: a resolver error the client sees in `errors` with a path. */
function failing(method: keyof Store): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === method) return () => Promise.reject(new Error(`${String(method)} failed`));
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

function args(document: DocumentNode, variables?: Record<string, unknown>, operationName?: string, over: Store = store): ExecutionArgs {
  return { schema, document, variableValues: variables, operationName, contextValue: { store: over, account: demo, loaders: createLoaders(over) } };
}

const CASES: [name: string, query: string, variables?: Record<string, unknown>, operationName?: string, over?: () => Store][] = [
  ['the benchmark query', '{ user(id: "u1") { id name friends(first: 4) { id name } } }'],
  ['aliases, __typename, fragments and inline fragments', '{ a: user(id: "u1") { __typename ...F friends(first: 2) { ... on User { id } } } b: user(id: "u2") { ...F } } fragment F on User { id name }'],
  ['variables with defaults', 'query Q($id: ID!, $n: Int = 2) { user(id: $id) { posts(first: $n) { title comments(first: $n) { body author { name } } } } }', { id: 'u1' }],
  ['skip and include', 'query Q($s: Boolean!) { user(id: "u1") { id @skip(if: $s) name @include(if: $s) friends(first: 1) @include(if: false) { id } } }', { s: true }],
  [
    'orders (own account), totals, nullable fields',
    '{ viewer { orders(first: 3) { id status totalCents currency discount { code percent } note items { sku quantity unitPriceCents } } } order(id: "1") { id } other: order(id: "x") { id } }',
  ],
  ['a missing user is null', '{ user(id: "nobody") { id } }'],
  ['several operations, one chosen by name', 'query A { user(id: "u1") { id } } query B { user(id: "u2") { name } }', undefined, 'B'],
  ['a variable that does not coerce', 'query Q($n: Int) { user(id: "u1") { friends(first: $n) { id } } }', { n: 'three' }],
  ['a missing required variable', 'query Q($id: ID!) { user(id: $id) { id } }', {}],
  ['a resolver error on a non-null list: null propagates to the parent', '{ user(id: "u1") { id friends(first: 2) { id } } }', undefined, undefined, () => failing('friendsOf')],
  ['a resolver error at the root', '{ viewer { id } user(id: "u2") { name } }', undefined, undefined, () => failing('userOfAccount')],
  [
    'null for a defaulted variable where non-null is needed: a field error, as graphql-js has it',
    'query Q($i: Boolean = true, $id: ID = "u1") { viewer { id name @include(if: $i) } user(id: $id) { id } }',
    { i: null, id: null },
  ],
  ['null for a defaulted variable where null is allowed', 'query Q($n: Int = 2) { user(id: "u1") { friends(first: $n) { id } } }', { n: null }],
  [
    'a field aliased __proto__, a scalar, a list and an object, anywhere in the selection (graphql-jit would set a prototype)',
    '{ viewer { __proto__: name id name2: name orders(first: 1) { __proto__: items { sku } id } } zz: viewer { id } __proto__: viewer { id } yy: viewer { id } }',
  ],
  ['introspection', '{ __schema { queryType { name } types { name kind } } __type(name: "User") { fields { name args { name type { name kind ofType { name } } } } } }'],
];

describe('compiledExecutor answers what graphql-js answers', () => {
  // Rows as objects: jest passes `done` into missing positional arguments.
  it.each(CASES.map(([name, query, variables, operationName, over]) => ({ name, query, variables, operationName, over })))('$name', async ({ query, variables, operationName, over }) => {
    const s = over?.() ?? store;
    const document = parse(query);
    const expected = JSON.stringify(await execute(args(document, variables, operationName, s)));
    const run = compiledExecutor(schema);
    // The first COMPILE_AFTER runs use graphql-js; the rest the compiled function.
    for (let i = 0; i <= COMPILE_AFTER + 1; i++) {
      expect(JSON.stringify(await run(args(document, variables, operationName, s)))).toBe(expected);
    }
  });

  it('answers what graphql-js answers for every directive condition a variable can give: declared type, default, and value absent, null or a boolean (generated)', async () => {
    const declared = fc.constantFrom('Boolean', 'Boolean!', 'Boolean = true', 'Boolean = false', 'Boolean! = true');
    const value = fc.constantFrom<{ v?: boolean | null }>({}, { v: null }, { v: true }, { v: false });
    await fc.assert(
      fc.asyncProperty(declared, fc.constantFrom('include', 'skip'), value, async (type, directive, { v }) => {
        // A nullable variable without a default may not stand for `if: Boolean!` (validation refuses it): not generated.
        if (type === 'Boolean') return;
        const document = parse(`query Q($v: ${type}) { viewer { id name @${directive}(if: $v) } }`);
        const variables = v === undefined ? {} : { v };
        const expected = JSON.stringify(await execute(args(document, variables)));
        const run = compiledExecutor(schema);
        for (let i = 0; i <= COMPILE_AFTER + 1; i++) expect(JSON.stringify(await run(args(document, variables)))).toBe(expected);
      }),
      { numRuns: 40 },
    );
  });

  it('compiles a document on its second execution, not its first', async () => {
    const spy = jest.fn();
    const run = compiledExecutor(schema, { onCompile: spy });
    const document = parse('{ user(id: "u1") { name } }');
    await run(args(document));
    expect(spy).not.toHaveBeenCalled();
    await run(args(document));
    await run(args(document));
    expect(spy).toHaveBeenCalledTimes(1);
    // A new document object (an uncached text) is never compiled on first sight.
    await run(args(parse('{ user(id: "u1") { name } }')));
    expect(spy).toHaveBeenCalledTimes(1);
  });
});
