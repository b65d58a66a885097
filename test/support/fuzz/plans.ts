/**
 * Request plans: what the fuzzer means to send to one operation, generated from the
 * contract's schemas, before it meets the server's state. A plan names its order by
 * reference (one of the orders made before the run, a fresh one, or literal text) and may
 * hold tokens resolved just before sending: `@current` (the order's current ETag),
 * `@next` (a real page cursor), `@uuid` (a fresh Idempotency-Key).
 *
 * - `validPlan`: every parameter and the body valid against their schemas;
 * - `mutantPlan`: a valid plan with exactly one constraint broken (a parameter's, the
 *   body's, the Content-Type, the body missing or not JSON), with the status the contract
 *   then requires (400 or 415);
 * - `garbagePlan`: a valid plan with one header empty, over its maxLength, or garbage.
 *
 * The path parameter `orderId` names an order by reference (above). Any other path
 * parameter (an operation a backend developer adds, `/widgets/{widgetId}`) takes its
 * contract `example` mostly, schema-valid values otherwise; the happy path takes the
 * example only, since nothing else can name a resource that exists. A query parameter of
 * type array is sent as the contract's default style says (`form`, `explode: true`):
 * once per item (`?tag=a&tag=b`).
 */
import fc from 'fast-check';
import { parseCanonicalInteger } from '../../../src/orders';
import { mutantsOf, SENDABLE_HEADER, validOf, type Medium, type Mutant } from './arbitraries';
import type { FuzzOperation, Param } from './contract';

export type IdRef = { pool: number } | { fresh: true } | { literal: string };

export interface Plan {
  kind: 'valid' | 'mutant' | 'garbage';
  /** What the plan means, for the report (`valid`, `header Api-Version: type`, ...). */
  intent: string;
  id?: IdRef;
  /** Path parameters other than `orderId`, as text (one missing: its example, see `wirePath`). */
  path?: Record<string, string>;
  query: [string, string][];
  /** Header name (as the contract spells it) -> value, possibly a token. */
  headers: Record<string, string>;
  body?: { contentType?: string; text?: string; bytes?: Buffer };
  /** Statuses the contract requires for this request beyond "declared" (e.g. 400 for a broken parameter). */
  expect?: number[];
}

export const POOL_SIZE = 6;
const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

const quotedTag = fc.stringMatching(/^"[0-9a-z-]{1,12}"$/);

/** Accept values the operation can be served with, and some it cannot (all valid per the schema). */
function acceptChoices(op: FuzzOperation): string[] {
  const declared = Object.entries(op.responses)
    .filter(([s]) => s.startsWith('2'))
    .flatMap(([, r]) => r.mediaTypes);
  const vendor = declared.filter((m) => m.includes('vnd.'));
  return [
    ...new Set([
      ...declared,
      ...vendor.map((m) => m.replace('version=', 'v=')),
      ...vendor.map((m) => m.replace(/version=\d+/, 'version=1')),
      ...vendor.map((m) => m.replace(/version=\d+/, 'version=2')),
      'application/json',
      '*/*',
      'application/*',
      'application/json;q=0.5, */*;q=0.1',
      'text/html',
      'application/vnd.orderline.order+json; version=3',
    ]),
  ];
}

const isWrite = (op: FuzzOperation) => op.route.method !== 'GET' && op.route.method !== 'HEAD';
const medium = (p: Param): Medium => p.in;

/** The path parameter that names an order: filled from the orders made before the run. */
export const ORDER_ID = 'orderId';
const otherPathParams = (op: FuzzOperation) => op.params.filter((p) => p.in === 'path' && p.name !== ORDER_ID);

/** A parameter value as wire text: an array's items repeated in a query (form, explode), comma-joined elsewhere (simple). */
const wire = (p: Param, v: unknown): string | string[] => (Array.isArray(v) ? (p.in === 'query' ? v.map(String) : v.map(String).join(',')) : String(v));

/** A path parameter's example as wire text, if the contract gives one. */
const exampleOf = (p: Param): string | undefined => (p.example === undefined ? undefined : [wire(p, p.example)].flat().join(','));

/** A path parameter's example, else one schema-valid value (the same every run). */
function exampleText(p: Param): string {
  return p.example !== undefined ? exampleOf(p)! : String(wire(p, fc.sample(validOf(p.schema, { medium: 'path' }), { numRuns: 1, seed: 1 })[0]));
}

/** The request path of a plan: `orderId` is `orderIdText` (already encoded), every other parameter the plan's value or its example. */
export function wirePath(op: FuzzOperation, plan: Pick<Plan, 'path'>, orderIdText: string): string {
  return op.route.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (name === ORDER_ID) return orderIdText;
    const p = op.params.find((q) => q.in === 'path' && q.name === name);
    if (!p) throw new Error(`${op.operationId}: path parameter ${name} is not declared`);
    return encodeURIComponent(plan.path?.[name] ?? exampleText(p));
  });
}

/** A schema-valid value of a parameter, as wire text (tokens allowed). */
function validParam(op: FuzzOperation, p: Param): fc.Arbitrary<string | string[] | undefined> {
  const fromSchema = validOf(p.schema, { medium: medium(p) }).map((v) => wire(p, v));
  if (p.in === 'path') return p.example === undefined ? fromSchema : fc.oneof({ arbitrary: fc.constant(exampleOf(p)!), weight: 3 }, { arbitrary: fromSchema, weight: 1 });
  const opt = <T>(a: fc.Arbitrary<T>, freq = 3) => fc.option(a, { nil: undefined, freq });
  switch (p.name) {
    case 'Accept':
      return opt(fc.oneof({ arbitrary: fc.constantFrom(...acceptChoices(op)), weight: 4 }, { arbitrary: fromSchema, weight: 1 }), 2);
    case 'Api-Version':
      return opt(fc.oneof({ arbitrary: fc.constantFrom('1', '2'), weight: 3 }, { arbitrary: fromSchema, weight: 1 }));
    case 'If-Match':
      // Entity tags as the contract describes them (an unparseable one is a documented 400: see garbagePlan).
      return fc.oneof(
        { arbitrary: fc.constant('@current'), weight: 6 },
        { arbitrary: fc.constant('*'), weight: 1 },
        { arbitrary: quotedTag, weight: 1 },
        { arbitrary: quotedTag.map((t) => `${t}, @current`), weight: 1 },
        { arbitrary: fc.constant(undefined), weight: 1 },
      );
    case 'If-None-Match':
      if (isWrite(op)) return fc.oneof({ arbitrary: fc.constant(undefined), weight: 8 }, { arbitrary: fc.constantFrom('*', '@current'), weight: 1 }, { arbitrary: quotedTag, weight: 1 });
      return opt(
        fc.oneof(
          fc.constantFrom('@current', 'W/@current', '*'),
          quotedTag,
          quotedTag.map((t) => `${t}, @current`),
        ),
      );
    case 'Idempotency-Key':
      return opt(fc.oneof({ arbitrary: fc.constant('@uuid'), weight: 2 }, { arbitrary: fromSchema, weight: 1 }));
    case 'page':
      return opt(fc.oneof({ arbitrary: fc.constant('@next'), weight: 2 }, { arbitrary: fromSchema, weight: 1 }));
    default:
      return p.required ? fromSchema : opt(fromSchema);
  }
}

const idRef: fc.Arbitrary<IdRef> = fc.oneof(
  { arbitrary: fc.nat({ max: POOL_SIZE - 1 }).map((pool) => ({ pool })), weight: 4 },
  { arbitrary: fc.constant({ fresh: true as const }), weight: 3 },
  // Valid per the schema, but no order of Alice's (404).
  { arbitrary: fc.constantFrom(9007199254740991, 987654321).map((n) => ({ literal: String(n) })), weight: 1 },
);

export function validBody(op: FuzzOperation): fc.Arbitrary<Plan['body']> {
  const cts = Object.keys(op.body!);
  return fc.constantFrom(...cts).chain((ct) => {
    const validate = op.route.body!.contentTypes[ct];
    const sendAs =
      ct === 'application/json'
        ? fc.constantFrom('application/json', 'application/json; charset=utf-8', 'Application/JSON')
        : ct.includes('version=')
          ? fc.constantFrom(ct, ct.replace('version=', 'v='), ct.replace('; ', ';'))
          : fc.constant(ct);
    return fc
      .tuple(
        validOf(op.body![ct], { medium: 'json' }).filter((v) => validate(clone(v))),
        sendAs,
      )
      .map(([v, contentType]) => ({ contentType, text: JSON.stringify(v) }));
  });
}

export function validPlan(op: FuzzOperation): fc.Arbitrary<Plan> {
  const nonPath = [...op.params.filter((p) => p.in !== 'path'), ...otherPathParams(op)];
  const hasId = op.params.some((p) => p.in === 'path' && p.name === ORDER_ID);
  return fc
    .record({
      id: hasId ? idRef : fc.constant(undefined),
      values: fc.tuple(...nonPath.map((p) => validParam(op, p))),
      unknownQuery: fc.option(fc.constantFrom<[string, string]>(['zz_unknown', '1'], ['limit_', 'x'], ['PAGE', 'abc'], ['utm_source', 'fuzz']), { freq: 5, nil: undefined }),
      body: op.body ? validBody(op) : fc.constant(undefined),
    })
    .map(({ id, values, unknownQuery, body }) => {
      const plan: Plan = { kind: 'valid', intent: 'valid', id, query: [], headers: {}, body };
      nonPath.forEach((p, i) => {
        const v = values[i];
        if (v === undefined) return;
        if (p.in === 'query') for (const item of [v].flat()) plan.query.push([p.name, item]);
        else if (p.in === 'path') plan.path = { ...plan.path, [p.name]: [v].flat().join(',') };
        else plan.headers[p.name] = [v].flat().join(',');
      });
      if (unknownQuery) {
        plan.query.push(unknownQuery);
        plan.intent = `valid, unknown query parameter ${unknownQuery[0]}`;
      }
      return plan;
    });
}

/** Whether the service must refuse this wire value of a parameter: its schema (the route's validator, coercing) or the canonical-integer rule. */
export function wireInvalid(op: FuzzOperation, p: Param, text: string): boolean {
  if (op.route.integerParams.includes(p.name) && parseCanonicalInteger(text) === null) return true;
  const validate = op.route.validate[p.in];
  if (!validate) return false;
  const probe: Record<string, unknown> = {};
  for (const q of op.params) if (q.in === p.in && q.required && q.name !== p.name) probe[q.name] = q.in === 'path' ? (q.name === ORDER_ID ? '1' : exampleText(q)) : 'x';
  probe[p.name] = text;
  return !validate(probe);
}

const asWire = (m: Mutant): string | undefined => {
  const v = m.value;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' || v === undefined) return String(v);
  return undefined; // null, objects, arrays: no wire form for a parameter
};

/**
 * `arb` filtered by `keep`, or nothing when `keep` rarely holds (a filter that never
 * passes would spin forever: e.g. a number is a valid string once it is header text, and
 * a broken branch of an `anyOf` may satisfy another branch).
 */
function viable<T>(arb: fc.Arbitrary<T>, keep: (v: T) => boolean): fc.Arbitrary<T> | undefined {
  const sample = fc.sample(arb, { numRuns: 12, seed: 42 });
  return sample.filter(keep).length >= 3 ? arb.filter(keep) : undefined;
}

const defined = <T>(xs: (T | undefined)[]): T[] => xs.filter((x): x is T => x !== undefined);

export interface Mutation {
  intent: string;
  apply(plan: Plan): void;
  expect: number[];
}

function paramMutations(op: FuzzOperation): fc.Arbitrary<Mutation>[] {
  return op.params.flatMap((p) =>
    defined(
      mutantsOf(p.schema, { medium: medium(p) }).map((arb) =>
        viable(
          arb.map((m) => ({ m, text: asWire(m) })),
          ({ text }) => text !== undefined && (p.in !== 'header' || (SENDABLE_HEADER.test(text) && text === text.trim())) && wireInvalid(op, p, text),
        ),
      ),
    ).map((arb) =>
      arb.map(({ m, text }) => ({
        intent: `${p.in} ${p.name}: ${m.rule}`,
        expect: [400],
        apply(plan: Plan) {
          if (p.in === 'path' && p.name === ORDER_ID) plan.id = { literal: text! };
          else if (p.in === 'path') plan.path = { ...plan.path, [p.name]: text! };
          else if (p.in === 'query') plan.query = [...plan.query.filter(([k]) => k !== p.name), [p.name, text!]];
          else plan.headers[p.name] = text!;
        },
      })),
    ),
  );
}

function bodyMutations(op: FuzzOperation): fc.Arbitrary<Mutation>[] {
  if (!op.body) return [];
  const out: fc.Arbitrary<Mutation>[] = [];
  for (const [ct, schema] of Object.entries(op.body)) {
    const validate = op.route.body!.contentTypes[ct];
    for (const arb of defined(mutantsOf(schema, { medium: 'json' }).map((a) => viable(a, (m) => !validate(clone(m.value)))))) {
      out.push(
        arb.map((m) => ({
          intent: `body (${ct}) ${m.pointer || '/'}: ${m.rule}`,
          expect: [400],
          apply(plan: Plan) {
            plan.body = { contentType: ct, text: JSON.stringify(m.value) };
          },
        })),
      );
    }
  }
  for (const [ct, schema] of Object.entries(op.body)) {
    const validate = op.route.body!.contentTypes[ct];
    // A valid body with one string (or member name) given an unpaired surrogate: JSON can escape it, UTF-8 cannot carry it.
    out.push(
      fc
        .tuple(
          validOf(schema, { medium: 'json' }).filter((v) => validate(clone(v)) && JSON.stringify(v).includes('":"')),
          fc.constantFrom('\\ud800', '\\udfff', '\\udc00x'),
        )
        .map(([v, lone]) => {
          const text = JSON.stringify(v).replace('":"', `":"${lone}`);
          return { intent: `body (${ct}): a string with an unpaired surrogate`, expect: [400], apply: (plan: Plan) => void (plan.body = { contentType: ct, text }) };
        }),
    );
  }
  const declared = Object.keys(op.body);
  const wrongTypes = [
    'text/plain',
    'application/xml',
    'application/x-www-form-urlencoded',
    'application/json-patch+json',
    'application/json',
    'application/merge-patch+json',
    'application/vnd.orderline.order+json; version=3',
    'application/vnd.orderline.order+json; version=1',
    'application/vnd.orderline.order+json; version=2',
    'multipart/form-data; boundary=x',
  ].filter((t) => !declared.includes(t));
  out.push(
    fc.constantFrom(...wrongTypes).map((t) => ({
      intent: `Content-Type ${t} (declared: ${declared.join(', ')})`,
      expect: [415],
      apply(plan: Plan) {
        plan.body = { contentType: t, text: plan.body?.text ?? '{}' };
      },
    })),
    fc.constant({
      intent: 'Content-Type missing',
      expect: [415],
      apply(plan: Plan) {
        plan.body = { text: plan.body?.text ?? '{}' };
      },
    }),
    fc.constant({
      intent: 'required body missing',
      expect: [400],
      apply(plan: Plan) {
        plan.body = { contentType: declared[0] };
      },
    }),
    fc.constantFrom(...hostileBodies(op)),
    fc.constantFrom('{', '{"note": }', "{'note': 'x'}", 'null x', '\u0000', '[1,]').map((text) => ({
      intent: `body not JSON: ${JSON.stringify(text)}`,
      expect: [400],
      apply(plan: Plan) {
        plan.body = { contentType: declared[0], text };
      },
    })),
  );
  return out;
}

const NESTING = [65, 1000, 6000, 20000];
const NESTED_IN = ['[', '{"items":[', '{"a":'];
/** Byte sequences UTF-8 does not allow: a lone byte FF, a lead byte without its continuation, overlong, a surrogate, truncated, 5 bytes long. */
const NOT_UTF8 = [[0xff], [0xc3, 0x28], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80]];

/**
 * Bodies that trip a reader rather than a schema: nesting far past any contract's (a
 * recursive walk of the parsed value, a fingerprint or a validator, would overflow the
 * stack; with an Idempotency-Key where the operation takes one, since the key's
 * fingerprint walks the body), and bytes that are not UTF-8 inside a JSON string (RFC
 * 8259 8.1: refused, never stored as U+FFFD). Every one is a 400 (413 past the size limit).
 */
export function hostileBodies(op: FuzzOperation): Mutation[] {
  if (!op.body) return [];
  const declared = Object.keys(op.body);
  const nested = NESTING.flatMap((depth) =>
    NESTED_IN.map((open) => ({
      intent: `body nested ${depth} deep (${open})`,
      expect: [400, 413],
      apply(plan: Plan) {
        const [o, c] = open === '{"a":' ? ['{"a":', '}'] : ['[', ']'];
        const text = open === '{"items":[' ? `{"items":[${'['.repeat(depth)}${']'.repeat(depth)}]}` : `${o.repeat(depth)}1${c.repeat(depth)}`;
        plan.body = { contentType: declared[0], text };
        if (op.params.some((p) => p.name === 'Idempotency-Key')) plan.headers['Idempotency-Key'] = '@uuid';
      },
    })),
  );
  const bytes = NOT_UTF8.map((bad) => ({
    intent: `body with bytes that are not UTF-8: ${Buffer.from(bad).toString('hex')}`,
    expect: [400],
    apply(plan: Plan) {
      const text = plan.body?.text && plan.body.text.includes('":"') ? plan.body.text : '{"note":"x"}';
      const at = text.indexOf('":"') + 3;
      plan.body = { contentType: declared[0], text, bytes: Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bad), Buffer.from(text.slice(at))]) };
    },
  }));
  return [...nested, ...bytes];
}

/** A valid plan with one mutation applied, as `mutantPlan` makes them. */
export function mutated(base: Plan, mut: Mutation): Plan {
  const plan: Plan = { ...base, kind: 'mutant', query: base.query.filter(([k]) => !k.includes('_') && k !== 'PAGE'), headers: { ...base.headers } };
  // Nothing else may decide the answer first: no reused Idempotency-Key, no cursor to fetch.
  if (plan.headers['Idempotency-Key'] !== undefined) plan.headers['Idempotency-Key'] = '@uuid';
  plan.query = plan.query.filter(([k, v]) => !(k === 'page' && v === '@next'));
  mut.apply(plan);
  plan.intent = mut.intent;
  plan.expect = mut.expect;
  return plan;
}

const mutantPlans = new Map<FuzzOperation, fc.Arbitrary<Plan> | undefined>();

/** A valid plan with one constraint broken (built once per operation). */
export function mutantPlan(op: FuzzOperation): fc.Arbitrary<Plan> | undefined {
  if (!mutantPlans.has(op)) mutantPlans.set(op, buildMutantPlan(op));
  return mutantPlans.get(op);
}

function buildMutantPlan(op: FuzzOperation): fc.Arbitrary<Plan> | undefined {
  const mutations = [...paramMutations(op), ...bodyMutations(op)];
  if (mutations.length === 0) return undefined;
  return fc.tuple(validPlan(op), fc.oneof(...mutations)).map(([base, mut]) => mutated(base, mut));
}

/** One declared header sent empty, over its maxLength, or as garbage: 400 exactly when the schema refuses it. */
export function garbagePlan(op: FuzzOperation): fc.Arbitrary<Plan> | undefined {
  const headers = op.params.filter((p) => p.in === 'header');
  if (headers.length === 0) return undefined;
  return fc
    .tuple(
      validPlan(op),
      fc.constantFrom(...headers),
      fc.oneof(
        fc.constant({ how: 'empty', value: '' }),
        fc.integer({ min: 1, max: 3000 }).map((n) => ({ how: 'very long', value: 'W/"'.padEnd(n, 'x') })),
        fc.constant({ how: 'very long', value: 'a'.repeat(8000) }),
        fc.stringMatching(/^[\x21-\x7e]( ?[\x21-\x7e]){0,40}$/).map((value) => ({ how: 'garbage', value })),
        fc.constantFrom('"', '""', 'W/', '*, "a"', '", "', 'W/"a', '"a" "b"', '-1', '01', '1.0', '2 ', '\u00e9t\u00e9', 'null', 'version=2').map((value) => ({ how: 'garbage', value })),
        // Integers a double cannot hold (2^53 + 1 reads as 2^53), and far past it.
        fc.constantFrom('9007199254740993', '9007199254740992', '100000000000000001', '-9007199254740993', '1e3', '0x2', '+2', '2.0').map((value) => ({ how: 'big or odd number', value })),
      ),
    )
    .map(([base, p, g]) => {
      const plan: Plan = { ...base, kind: 'garbage', headers: { ...base.headers, [p.name]: g.value } };
      if (p.name !== 'Idempotency-Key' && plan.headers['Idempotency-Key'] !== undefined) plan.headers['Idempotency-Key'] = '@uuid';
      plan.intent = `header ${p.name} ${g.how} (${g.value.length} chars)`;
      if (wireInvalid(op, p, g.value.trim())) plan.expect = [400];
      return plan;
    });
}

/**
 * A plan the contract says succeeds: a valid plan on a fresh (pending) order, with no
 * Accept or Api-Version to refuse, the current ETag, no If-None-Match, no page cursor
 * but a real one, and a body of the version Alice is served (2, where it is negotiated)
 * whose documented conditions hold (a status the order may move to from pending; a new
 * discount with both members). Expected: a 2xx.
 */
export function happyPlan(op: FuzzOperation, bodyOk: (op: FuzzOperation, plan: Plan) => boolean): fc.Arbitrary<Plan> {
  return validPlan(op)
    .map((base) => {
      const plan: Plan = { ...base, kind: 'valid', intent: `happy path (${base.intent})`, headers: { ...base.headers }, query: base.query.filter(([k, v]) => k !== 'page' || v === '@next') };
      if (plan.id) plan.id = { fresh: true };
      for (const p of otherPathParams(op)) {
        if (p.example === undefined) throw new Error(`${op.operationId}: path parameter ${p.name} declares no example; the happy path needs one that names a resource the handler serves`);
        plan.path = { ...plan.path, [p.name]: exampleOf(p)! };
        plan.intent += `, ${p.name} = its example ${exampleOf(p)!}`;
      }
      for (const h of ['Accept', 'Api-Version', 'If-None-Match']) delete plan.headers[h];
      if (op.params.some((p) => p.name === 'If-Match')) plan.headers['If-Match'] = '@current';
      if (plan.headers['Idempotency-Key'] !== undefined) plan.headers['Idempotency-Key'] = '@uuid';
      // The success statuses the operation declares (a DELETE's 204, a create's 201); a 304 is no success here.
      const successes = Object.keys(op.responses)
        .filter((s) => /^2\d\d$/.test(s))
        .map(Number);
      plan.expect = successes.length > 0 ? successes : [op.route.method === 'POST' && !op.route.path.endsWith('/cancel') ? 201 : 200];
      return plan;
    })
    .filter((plan) => bodyOk(op, plan));
}
