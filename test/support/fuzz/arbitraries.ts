/**
 * fast-check arbitraries from JSON Schema (the subset contracts/openapi.yaml uses): values
 * a schema accepts (`validOf`), and values that break exactly one of its constraints
 * (`mutantsOf`), each labelled with the rule it breaks and where. The generators aim; the
 * route table's Ajv validators judge (a caller filters on them), so a generator that is
 * too loose costs a discarded run, never a false finding.
 *
 * Supported: $ref, const, enum, type (incl. lists such as ["string", "null"]), minimum,
 * maximum, minLength, maxLength, pattern (fc.stringMatching), format date-time, properties,
 * required, additionalProperties (false or a schema), items, minItems, maxItems, oneOf, anyOf.
 */
import fc from 'fast-check';
import { deref, type Schema } from './contract';

/** How a generated value may be written: a JSON body may hold any text, a header only what fetch sends. */
export type Medium = 'json' | 'header' | 'query' | 'path';

export interface GenOptions {
  medium: Medium;
  /** Longest string or array generated in the ordinary case (a boundary case may reach the schema's max). */
  cap?: number;
}

const JSON_TYPES = ['string', 'integer', 'number', 'boolean', 'null', 'object', 'array'] as const;

/** A header value fetch can send (visible ASCII and inner spaces; fetch trims the ends). */
export const SENDABLE_HEADER = /^([\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?)?$/;

const codePoints = (s: string) => [...s].length;

function typesOf(s: Schema): string[] {
  if (Array.isArray(s.type)) return s.type as string[];
  if (typeof s.type === 'string') return [s.type];
  if (s.properties || s.required || s.additionalProperties !== undefined) return ['object'];
  if (s.items) return ['array'];
  if (s.pattern || s.minLength !== undefined || s.maxLength !== undefined) return ['string'];
  if (s.minimum !== undefined || s.maximum !== undefined) return ['number'];
  return [];
}

/**
 * Text that storage and transports trip on: U+0000, separators, a BOM, astral characters, a
 * backslash, between ordinary text. (An unpaired surrogate is not text UTF-8 can carry,
 * RFC 8259 8.2: the body mutants send it, as a 400.)
 */
const awkwardText = fc.tuple(fc.string({ maxLength: 3 }), fc.constantFrom('\u0000', '\u2028', '\ufeff', '\u{1F600}', '\r\n', '\\'), fc.string({ maxLength: 3 })).map(([a, b, c]) => a + b + c);

function stringArb(s: Schema, o: GenOptions): fc.Arbitrary<string> {
  const min = (s.minLength as number | undefined) ?? 0;
  const max = (s.maxLength as number | undefined) ?? Infinity;
  const cap = Math.max(min, Math.min(max, o.cap ?? 40));
  const inBounds = (t: string) => codePoints(t) >= min && codePoints(t) <= max;
  if (s.format === 'date-time') return fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4102444800000) }).map((d) => d.toISOString());
  if (typeof s.pattern === 'string') {
    const re = new RegExp(s.pattern, 'u');
    const ordinary = fc.stringMatching(re, { size: 'small' }).filter(inBounds);
    const arbs: fc.WeightedArbitrary<string>[] = [
      { arbitrary: ordinary, weight: 5 },
      { arbitrary: fc.stringMatching(re, { size: 'medium' }).filter(inBounds), weight: 1 },
    ];
    // The awkward text below, wherever the pattern admits it (a pattern that only excludes a character does).
    const admitted = (t: string) => re.test(t) && inBounds(t);
    if (o.medium === 'json' && fc.sample(awkwardText, { numRuns: 60, seed: 3 }).some(admitted)) arbs.push({ arbitrary: awkwardText.filter(admitted), weight: 1 });
    // The longest text the schema allows, of characters the pattern admits (a repeated one-character match).
    const unit = fc.sample(fc.stringMatching(re, { size: 'xsmall' }), { numRuns: 40, seed: 1 }).find((x) => codePoints(x) === 1);
    if (unit !== undefined && Number.isFinite(max) && max <= 4000 && re.test(unit.repeat(max))) {
      arbs.push({
        arbitrary: fc
          .constantFrom(...new Set([unit, ...fc.sample(fc.stringMatching(re, { size: 'xsmall' }), { numRuns: 40, seed: 2 })].filter((x) => codePoints(x) === 1 && re.test(x.repeat(max)))))
          .map((u) => u.repeat(max)),
        weight: 1,
      });
    }
    return fc.oneof(...arbs);
  }
  const unit = o.medium === 'json' ? fc.constantFrom<'grapheme-ascii' | 'grapheme' | 'binary'>('grapheme-ascii', 'grapheme', 'binary') : fc.constant<'grapheme-ascii'>('grapheme-ascii');
  const ordinary = unit.chain((u) => fc.string({ unit: u, minLength: min, maxLength: cap })).filter(inBounds);
  const arbs: fc.WeightedArbitrary<string>[] = [{ arbitrary: ordinary, weight: 8 }];
  if (o.medium === 'json') arbs.push({ arbitrary: awkwardText, weight: 1 });
  // Boundaries: exactly minLength, exactly maxLength (when a request can carry it).
  if (Number.isFinite(max) && max <= 4000) arbs.push({ arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: max, maxLength: max }), weight: 1 });
  if (min > 0) arbs.push({ arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: min, maxLength: min }), weight: 1 });
  const all = fc.oneof(...arbs);
  return o.medium === 'json' ? all : all.filter((t) => SENDABLE_HEADER.test(t) && (o.medium !== 'header' || t === t.trim()));
}

function numberArb(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = (s.minimum as number | undefined) ?? (integer ? -1_000_000 : -1e9);
  const max = (s.maximum as number | undefined) ?? (integer ? 1_000_000 : 1e9);
  const base = integer ? fc.integer({ min: Math.max(min, Number.MIN_SAFE_INTEGER), max: Math.min(max, Number.MAX_SAFE_INTEGER) }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  return fc.oneof({ arbitrary: base, weight: 6 }, { arbitrary: fc.constantFrom(min, max), weight: 1 });
}

/** Values the schema accepts (aimed at; the route's validator is the judge). */
export function validOf(schema: Schema, o: GenOptions): fc.Arbitrary<unknown> {
  const s = deref(schema);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  // The schema's own `examples` (e.g. the order statuses of an open set) are values it accepts that mean something.
  if (Array.isArray(s.examples) && s.examples.length > 0) {
    const { examples, ...rest } = s;
    return fc.oneof({ arbitrary: fc.constantFrom(...(examples as unknown[])), weight: 3 }, { arbitrary: validOf(rest, o), weight: 1 });
  }
  const union = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (union) return fc.oneof(...union.map((b) => validOf(b, o)));
  const types = typesOf(s);
  if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(...types.map((t) => validOfType(s, t, o)));
}

function validOfType(s: Schema, type: string, o: GenOptions): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return numberArb(s, true);
    case 'number':
      return numberArb(s, false);
    case 'string':
      return stringArb(s, o);
    case 'array': {
      const minItems = (s.minItems as number | undefined) ?? 0;
      const maxItems = (s.maxItems as number | undefined) ?? Infinity;
      const item = s.items ? validOf(s.items as Schema, o) : fc.jsonValue({ maxDepth: 1 });
      const ordinary = fc.array(item, { minLength: minItems, maxLength: Math.max(minItems, Math.min(maxItems, 4)) });
      if (!Number.isFinite(maxItems) || maxItems > 200) return ordinary;
      return fc.oneof({ arbitrary: ordinary, weight: 30 }, { arbitrary: fc.array(item, { minLength: maxItems, maxLength: maxItems }), weight: 1 });
    }
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = (s.required ?? []) as string[];
      const record = fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, validOf(v, o)])), { requiredKeys: required.filter((k) => k in props) });
      const extra = s.additionalProperties;
      if (extra && typeof extra === 'object') {
        return fc
          .tuple(
            record,
            fc.dictionary(
              fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !(k in props)),
              validOf(extra as Schema, o),
              { maxKeys: 3 },
            ),
          )
          .map(([a, b]) => ({ ...b, ...a }));
      }
      return record;
    }
    default:
      throw new Error(`unsupported type ${type}`);
  }
}

/** A value that breaks one rule, where (JSON pointer, '' for the value itself) and which rule. */
export interface Mutant {
  value: unknown;
  pointer: string;
  rule: string;
}

const mutant = (value: unknown, rule: string, pointer = ''): Mutant => ({ value, rule, pointer });

/** A value of each JSON type the schema does not allow. */
function wrongTypes(types: string[], o: GenOptions): fc.Arbitrary<Mutant>[] {
  const samples: Record<string, fc.Arbitrary<unknown>> = {
    string: fc.string({ maxLength: 8 }),
    integer: fc.integer({ min: -1000, max: 1000 }),
    number: fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)),
    boolean: fc.boolean(),
    null: fc.constant(null),
    object: fc.constant({}),
    array: fc.constant([]),
  };
  const allowed = new Set(types.flatMap((t) => (t === 'number' ? ['number', 'integer'] : [t])));
  // On the wire every parameter is text: only a value whose text is not of the type breaks it.
  const wire = o.medium !== 'json';
  return JSON_TYPES.filter((t) => !allowed.has(t))
    .filter((t) => !wire || t === 'string' || t === 'number')
    .map((t) => {
      if (wire && t === 'string') return fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,8}$/).map((v) => mutant(v, 'type'));
      return samples[t].map((v) => mutant(v, 'type'));
    });
}

/**
 * Values that break exactly one rule of the schema (or of one member or item, the rest
 * valid). Empty when nothing can break it (`{}`).
 */
export function mutantsOf(schema: Schema, o: GenOptions): fc.Arbitrary<Mutant>[] {
  const s = deref(schema);
  const out: fc.Arbitrary<Mutant>[] = [];
  if ('const' in s)
    out.push(
      fc
        .string({ maxLength: 6 })
        .filter((v) => v !== s.const)
        .map((v) => mutant(v, 'const')),
    );
  if (Array.isArray(s.enum))
    out.push(
      fc
        .string({ maxLength: 10 })
        .filter((v) => !(s.enum as unknown[]).includes(v))
        .map((v) => mutant(v, 'enum')),
    );
  const union = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (union) {
    // A branch's mutant may satisfy another branch: the caller's validator filters those out.
    const branchTypes = union.flatMap((b) => typesOf(deref(b)));
    out.push(...wrongTypes(branchTypes, o));
    for (const b of union) out.push(...mutantsOf(b, o).filter(() => true));
    return out;
  }
  const types = typesOf(s);
  if (types.length === 0) return out;
  out.push(...wrongTypes(types, o));
  for (const t of types) {
    if (t === 'integer' || t === 'number') {
      if (typeof s.minimum === 'number') out.push(fc.constant(mutant(s.minimum - 1, 'minimum')));
      if (typeof s.maximum === 'number') out.push(fc.constant(mutant(s.maximum + 1 > Number.MAX_SAFE_INTEGER ? '9007199254740992' : s.maximum + 1, 'maximum')));
      if (t === 'integer') out.push(fc.constantFrom(1.5, -0.25).map((v) => mutant(o.medium === 'json' ? v : String(v), 'type')));
    }
    if (t === 'string') {
      const min = s.minLength as number | undefined;
      const max = s.maxLength as number | undefined;
      const re = typeof s.pattern === 'string' ? new RegExp(s.pattern, 'u') : undefined;
      const fits = (v: string) => !re || re.test(v);
      if (min !== undefined && min > 0) out.push(fc.constant(mutant('x'.repeat(min - 1).slice(0, min - 1), 'minLength')));
      if (max !== undefined) {
        // The shortest string over the limit that still matches the pattern (a long one where it cannot).
        const unit = re ? (fc.sample(fc.stringMatching(re, { size: 'xsmall' }), { numRuns: 20, seed: 1 }).find((x) => codePoints(x) === 1) ?? 'A') : 'x';
        out.push(fc.integer({ min: max + 1, max: max + 40 }).map((n) => mutant(unit.repeat(n), 'maxLength')));
      }
      if (re) {
        // JSON text: ordinary or awkward (a pattern that only excludes a character, U+0000, refuses only the latter).
        const text = o.medium === 'json' ? fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), awkwardText) : fc.stringMatching(/^[\x21-\x7e]( ?[\x21-\x7e]){0,10}$/);
        out.push(text.filter((v) => !re.test(v) && (min === undefined || codePoints(v) >= min) && (max === undefined || codePoints(v) <= max)).map((v) => mutant(v, 'pattern')));
        // A space inside: a header and a query value can carry it, and visible-ASCII patterns refuse it.
        if (!fits('a b')) out.push(fc.constant(mutant('a b', 'pattern')));
      }
    }
    if (t === 'array') {
      const item = (s.items ?? {}) as Schema;
      const minItems = s.minItems as number | undefined;
      const maxItems = s.maxItems as number | undefined;
      if (minItems !== undefined && minItems > 0) out.push(fc.array(validOf(item, o), { minLength: minItems - 1, maxLength: minItems - 1 }).map((v) => mutant(v, 'minItems')));
      if (maxItems !== undefined) out.push(fc.array(validOf(item, o), { minLength: maxItems + 1, maxLength: maxItems + 1 }).map((v) => mutant(v, 'maxItems')));
      for (const m of mutantsOf(item, o)) {
        out.push(
          fc.tuple(fc.array(validOf(item, o), { maxLength: 3 }), m, fc.nat()).map(([arr, mm, i]) => {
            const at = arr.length === 0 ? 0 : i % (arr.length + 1);
            const copy = [...arr];
            copy.splice(at, 0, mm.value);
            return mutant(copy, mm.rule, `/${at}${mm.pointer}`);
          }),
        );
      }
    }
    if (t === 'object') {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = (s.required ?? []) as string[];
      const whole = validOfType(s, 'object', o) as fc.Arbitrary<Record<string, unknown>>;
      for (const k of required) {
        out.push(
          whole.map((v) => {
            const copy = { ...v };
            delete copy[k];
            return mutant(copy, 'required', `/${k}`);
          }),
        );
      }
      if (s.additionalProperties === false) {
        out.push(
          fc
            .tuple(whole, fc.constantFrom('colour', 'id', 'extra', '__proto__x', 'Status', 'total_cents'), fc.jsonValue({ maxDepth: 1 }))
            .filter(([, k]) => !(k in props))
            .map(([v, k, x]) => mutant({ ...v, [k]: x }, 'additionalProperties', `/${k}`)),
        );
      }
      for (const [k, ps] of Object.entries(props)) {
        for (const m of mutantsOf(ps, o)) out.push(fc.tuple(whole, m).map(([v, mm]) => mutant({ ...v, [k]: mm.value }, mm.rule, `/${k}${mm.pointer}`)));
      }
    }
  }
  return out;
}
