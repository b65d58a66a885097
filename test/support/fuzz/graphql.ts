/**
 * GraphQL documents generated from contracts/schema.graphql (graphql-js `buildSchema`)
 * with fast-check, each carrying what the fuzzer expects of it, computed here and not
 * by the service's rules: the depth (as graphql-depth-limit counts it: a root field is
 * 0) and the cost (the schema's own text: a scalar or enum 1, `__typename` 0, an object
 * 2 plus its selections, a list size x (2 + its selections), size = `first` or 10), the
 * `first` values asked for, and the variables' fit. graphql-js's `validate` (the spec's
 * rules) says whether the document is valid at all.
 *
 * Selections are walked to a bounded depth that is sometimes beyond the limit; arguments
 * are of the right type (in and out of range) or of a wrong one; variables are declared
 * and sent with values of every JSON shape (deep, huge, of the wrong type, missing).
 */
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, getNamedType, getNullableType, isLeafType, isListType, isNonNullType, isObjectType, parse, validate, type GraphQLField, type GraphQLObjectType } from 'graphql';

export const SCHEMA = buildSchema(readFileSync(join(__dirname, '../../../contracts/schema.graphql'), 'utf8'));

/** The schema's documented limits (its description, "Cost and depth"; `first` at most 100). */
export const LIMITS = { maxDepth: 4, maxCost: 1000, listFactor: 10, maxFirst: 100 } as const;
/** The size an order's `items` list is priced at (the schema's "Cost and depth"). */
const ITEMS_SIZE = 100;

/** A value for an argument: literal text in the document, or a variable and the JSON sent for it. */
type ArgValue = { literal: string; first?: number | 'bad' } | { variable: { type: string; value: unknown; sent: boolean }; first?: number | 'bad' };

export interface Generated {
  /** The document text. */
  query: string;
  variables: Record<string, unknown>;
  depth: number;
  cost: number;
  /** A `first` out of 0..100, or not an Int, anywhere. */
  badFirst: boolean;
  /** A variable value that cannot be coerced to its declared type (or a required one missing). */
  badVariable: boolean;
  /** graphql-js's specified rules reject it. */
  invalid: boolean;
}

interface Ctx {
  vars: { name: string; type: string; value: unknown; sent: boolean }[];
  badFirst: boolean;
  badVariable: boolean;
}

const INT32 = 2 ** 31;

/** JSON values of every shape, some deep and some big. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 6 },
  // Built as values (JSON.stringify writes them), so kept under the depth where it overflows; deeper ones are text (graphqlFuzz.test.ts).
  { arbitrary: fc.constantFrom(64, 65, 1000).map((d) => deepArray(d)), weight: 1 },
  { arbitrary: fc.constantFrom(64, 65, 1000).map((d) => deepObject(d)), weight: 1 },
  { arbitrary: fc.constantFrom(1e300, -0, 2 ** 53 + 2, 1.5, INT32, -INT32 - 1), weight: 1 },
  { arbitrary: fc.integer({ min: 1000, max: 5000 }).map((n) => Array.from({ length: n }, (_, i) => i)), weight: 1 },
);

export function deepArray(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

export function deepObject(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** Whether a JSON value coerces to GraphQL `Int` / `ID` (graphql-js's input coercion). */
const isInt = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= -INT32 && v < INT32;
// ID takes any integer, not only an Int's 32 bits (graphql-js coerces it to its decimal string).
const isId = (v: unknown) => typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));

/** A `first` argument: a literal or a variable, in range, out of it, or not an Int. */
function firstArb(): fc.Arbitrary<ArgValue> {
  const literal = fc.oneof(
    { arbitrary: fc.integer({ min: 0, max: LIMITS.maxFirst }).map((n) => ({ literal: String(n), first: n })), weight: 6 },
    { arbitrary: fc.constantFrom(-1, 101, 1000, INT32 - 1).map((n) => ({ literal: String(n), first: n })), weight: 2 },
    // Not an Int: graphql-js's rules refuse them (the `invalid` oracle covers these).
    { arbitrary: fc.constantFrom(String(INT32), '1.5', '"3"', 'true', '[1]', '{a: 1}', 'RED', '-0.0', '1e3').map((literal) => ({ literal })), weight: 1 },
  );
  const variable = fc.oneof({ arbitrary: fc.integer({ min: 0, max: LIMITS.maxFirst }), weight: 4 }, { arbitrary: fc.constantFrom(-1, 101, INT32 - 1), weight: 1 }, { arbitrary: anyJson, weight: 2 }).chain((value) =>
    fc.record({ type: fc.constantFrom('Int', 'Int!', 'Int = 5'), sent: fc.boolean() }).map(({ type, sent }): ArgValue => {
      const v = { type, value, sent };
      // Absent: the default (5) or null (no size: the list factor).
      const first = !sent ? (type === 'Int = 5' ? 5 : undefined) : value === null ? undefined : typeof value === 'number' && isInt(value) ? value : 'bad';
      return { variable: v, first };
    }),
  );
  return fc.oneof({ arbitrary: literal, weight: 3 }, { arbitrary: variable, weight: 1 });
}

/** An `id: ID!` argument: ids that exist or not, of the right type or not. */
function idArb(existing: readonly string[]): fc.Arbitrary<ArgValue> {
  const literal = fc.oneof(
    { arbitrary: fc.constantFrom(...existing).map((id) => ({ literal: JSON.stringify(id) })), weight: 4 },
    { arbitrary: fc.constantFrom('"0"', '"-1"', '"abc"', '""', '"99999999999999999999"', '"1e3"', '7', '"\\u0000"').map((literal) => ({ literal })), weight: 2 },
    { arbitrary: fc.constantFrom('null', 'true', '1.5', '[1]', '{id: 1}', 'ENUM', String(INT32)).map((literal) => ({ literal })), weight: 1 },
  );
  const variable = fc
    .oneof(fc.constantFrom(...existing), anyJson)
    .chain((value) => fc.record({ type: fc.constantFrom('ID!', 'ID', 'String!', 'Int!'), sent: fc.boolean() }).map(({ type, sent }) => ({ variable: { type, value, sent } })));
  return fc.oneof({ arbitrary: literal, weight: 3 }, { arbitrary: variable, weight: 1 });
}

/** A selection set of `type` at `level` (its fields are at `level`), generated no deeper than `stop`. */
function selectionArb(type: GraphQLObjectType, level: number, stop: number, existing: readonly string[]): fc.Arbitrary<Node[]> {
  const fields = Object.values(type.getFields());
  const fieldArb = fc.constantFrom(...fields).chain((f) => fieldNodeArb(f, level, stop, existing));
  return fc.tuple(fc.array(fieldArb, { minLength: 1, maxLength: 3 }), fc.boolean()).map(([nodes, typename]) => (typename ? [...nodes, { kind: 'typename' }] : nodes));
}

type Node = { kind: 'typename' } | { kind: 'field'; name: string; alias?: string; args: [string, ArgValue][]; list: boolean; leaf: boolean; children: Node[] };

function fieldNodeArb(f: GraphQLField<unknown, unknown>, level: number, stop: number, existing: readonly string[]): fc.Arbitrary<Node> {
  const nullable = getNullableType(f.type);
  const list = isListType(nullable);
  const named = getNamedType(f.type);
  const leaf = isLeafType(named);
  const argArbs = f.args.map((a) => {
    if (a.name === 'first') return fc.option(firstArb(), { nil: undefined, freq: 2 }).map((v) => (v ? ([a.name, v] as [string, ArgValue]) : undefined));
    // A required argument, sometimes left out (a validation error).
    const arb = idArb(existing);
    return isNonNullType(a.type)
      ? fc.oneof({ arbitrary: arb.map((v) => [a.name, v] as [string, ArgValue]), weight: 12 }, { arbitrary: fc.constant(undefined), weight: 1 })
      : fc.option(
          arb.map((v) => [a.name, v] as [string, ArgValue]),
          { nil: undefined },
        );
  });
  const children: fc.Arbitrary<Node[]> = leaf || !isObjectType(named) ? fc.constant([]) : level >= stop ? leafOnly(named) : selectionArb(named, level + 1, stop, existing);
  return fc.record({ args: fc.tuple(...argArbs), children, alias: fc.option(fc.constantFrom('a', 'b', 'x1'), { nil: undefined, freq: 5 }) }).map(({ args, children: c, alias }) => ({
    kind: 'field' as const,
    name: f.name,
    alias,
    args: args.filter((a): a is [string, ArgValue] => a !== undefined),
    list,
    leaf,
    children: c,
  }));
}

/** At the generation floor: an object's scalar fields only (or `__typename` for a type without one). */
function leafOnly(type: GraphQLObjectType): fc.Arbitrary<Node[]> {
  const leaves = Object.values(type.getFields()).filter((f) => isLeafType(getNamedType(f.type)));
  if (leaves.length === 0) return fc.constant([{ kind: 'typename' }]);
  return fc.subarray(leaves, { minLength: 1 }).map((fs) => fs.map((f) => ({ kind: 'field' as const, name: f.name, args: [], list: isListType(getNullableType(f.type)), leaf: true, children: [] })));
}

function argText(v: ArgValue, ctx: Ctx): string {
  if ('literal' in v) return v.literal;
  const name = `v${ctx.vars.length}`;
  ctx.vars.push({ name, ...v.variable });
  return `$${name}`;
}

/** Writes the selection, and returns its depth (deepest field's level) and cost, as the schema documents them. */
function render(nodes: Node[], level: number, ctx: Ctx): { text: string; depth: number; cost: number } {
  let depth = level;
  let cost = 0;
  const parts: string[] = [];
  for (const n of nodes) {
    if (n.kind === 'typename') {
      parts.push('__typename');
      continue;
    }
    const args = n.args.map(([name, v]) => {
      if (name === 'first' && v.first !== undefined && (v.first === 'bad' || v.first < 0 || v.first > LIMITS.maxFirst)) ctx.badFirst = true;
      return `${name}: ${argText(v, ctx)}`;
    });
    const sub = n.children.length > 0 ? render(n.children, level + 1, ctx) : undefined;
    const firstArg = n.args.find(([name]) => name === 'first')?.[1];
    // An order's `items` (the schema's only field of that name) are served whole: priced at 100, the most an order holds.
    const size = firstArg && typeof firstArg.first === 'number' ? firstArg.first : n.name === 'items' ? ITEMS_SIZE : LIMITS.listFactor;
    const own = n.leaf ? 1 : 2 + (sub?.cost ?? 0);
    cost += n.list ? size * (n.leaf ? 1 : own) : own;
    depth = Math.max(depth, sub?.depth ?? level);
    parts.push(`${n.alias ? `${n.alias}: ` : ''}${n.name}${args.length > 0 ? `(${args.join(', ')})` : ''}${sub ? ` { ${sub.text} }` : ''}`);
  }
  return { text: parts.join(' '), depth, cost };
}

function coerces(type: string, value: unknown, sent: boolean): boolean {
  const base = type.replace(/ = .*$/, '');
  if (!sent) return !base.endsWith('!');
  if (value === null) return !base.endsWith('!');
  const named = base.replace('!', '');
  if (named === 'Int') return isInt(value);
  if (named === 'ID') return isId(value);
  if (named === 'String') return typeof value === 'string';
  return false;
}

/**
 * A query document from the schema's root, generated to a depth of 1 to 6 (the limit is
 * 4), with its expectations. `existing`: ids the fuzzer knows exist (users, orders).
 */
export function queryArb(existing: readonly string[]): fc.Arbitrary<Generated> {
  const root = SCHEMA.getQueryType()!;
  return fc
    .tuple(fc.integer({ min: 0, max: 5 }), fc.constantFrom('query', 'query Q', 'query Q'), fc.boolean())
    .chain(([stop, head, fragment]) => fc.record({ stop: fc.constant(stop), head: fc.constant(head), fragment: fc.constant(fragment), nodes: selectionArb(root, 0, stop, existing) }))
    .map(({ head, fragment, nodes }) => {
      const ctx: Ctx = { vars: [], badFirst: false, badVariable: false };
      const body = render(nodes, 0, ctx);
      const defs = ctx.vars.map((v) => `$${v.name}: ${v.type}`);
      let query = `${head}${defs.length > 0 ? `(${defs.join(', ')})` : ''} { ${body.text} }`;
      // The same selection through a named fragment (expanded where spread: same depth and cost).
      if (fragment) query = `${head}${defs.length > 0 ? `(${defs.join(', ')})` : ''} { ...F }\nfragment F on Query { ${body.text} }`;
      const variables: Record<string, unknown> = {};
      for (const v of ctx.vars) if (v.sent) variables[v.name] = v.value;
      const badVariable = ctx.vars.some((v) => !coerces(v.type, v.value, v.sent));
      let invalid: boolean;
      try {
        invalid = validate(SCHEMA, parse(query)).length > 0;
      } catch {
        invalid = true;
      }
      return { query, variables, depth: body.depth, cost: body.cost, badFirst: ctx.badFirst, badVariable, invalid };
    });
}

/** Documents that are not what the builder makes: broken text, cycles, unknown fragments, mutations, huge ones. */
export const ODD_DOCUMENTS: readonly { query: string; intent: string }[] = [
  { query: '{', intent: 'unclosed' },
  { query: '', intent: 'empty' },
  { query: '{ user(id: "1") { ...A } } fragment A on User { friends { ...B } } fragment B on User { friends { ...A } }', intent: 'fragment cycle' },
  { query: '{ user(id: "1") { ...Nope } }', intent: 'unknown fragment' },
  { query: 'mutation { user(id: "1") { id } }', intent: 'a mutation (the schema has none)' },
  { query: 'subscription { user(id: "1") { id } }', intent: 'a subscription' },
  { query: 'query A { viewer { id } } query B { viewer { id } }', intent: 'two operations, no operationName' },
  { query: '{ __schema { types { name fields { name type { name ofType { name ofType { name ofType { name } } } } } } } }', intent: 'introspection' },
  { query: '{ user(id: "1") { friends(first: 100) { friends(first: 100) { name } } } }', intent: 'cost 10200' },
  { query: '{ viewer { id } }\u0000', intent: 'NUL after the document' },
  { query: '{ viewer { id \u00e9 } }', intent: 'a non-ASCII name' },
  { query: 'mutation M { viewer { id } }', intent: 'a named mutation' },
  { query: 'query Q { viewer { id } } mutation M { viewer { id } }', intent: 'a query and a mutation, no operationName' },
];

/** Odd documents of a size: huge, deep, wide. */
export const oddDocumentArb: fc.Arbitrary<{ query: string; intent: string }> = fc.oneof(
  fc.integer({ min: 500, max: 3000 }).map((n) => ({ query: `{ ${'viewer { id } '.repeat(n)}}`, intent: `${n} repeated fields` })),
  fc.integer({ min: 10, max: 400 }).map((n) => ({ query: `{ user(id: "1") ${'{ friends '.repeat(n)}{ id }${' }'.repeat(n)} }`, intent: `${n} nested friends` })),
  fc.integer({ min: 100, max: 2000 }).map((n) => ({ query: `{ viewer { ${Array.from({ length: n }, (_, i) => `a${i}: id`).join(' ')} } }`, intent: `${n} aliases` })),
);
