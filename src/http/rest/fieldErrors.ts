import type { ErrorObject } from 'ajv';
import { malformedTagProblem, type TagField } from '../conditional';

/** One refused member of a request: where it is, the rule it breaks, and a sentence. */
export interface FieldError {
  /** JSON pointer of the offending member (RFC 6901), or `header:<name>` / `query:<name>` / `path:<name>`. */
  pointer: string;
  /** The JSON Schema keyword it breaks (`additionalProperties`, `required`, `type`, ...). */
  rule: string;
  message: string;
}

export type Where = 'path' | 'query' | 'header' | 'body';

/** At most this many entries: enough to fix a body, bounded against huge ones. */
export const MAX_FIELD_ERRORS = 20;

const escape = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1');

/** Header fields whose `pattern` is the entity-tag list grammar: refused with its sentence, not the regular expression. */
const TAG_FIELDS: ReadonlySet<string> = new Set<TagField>(['If-Match', 'If-None-Match']);

/**
 * Ajv's errors as one list a client can act on: each entry names the member itself
 * (`/colour` for a member that must not be there, `/items/0/quantity` for a missing
 * one) and the rule; the summary lines of `anyOf`/`oneOf` and the "must be null" of a
 * nullable member's other branch say nothing the other entries do not, and the same
 * member and rule is listed once.
 */
export function fieldErrors(where: Where, errors: readonly ErrorObject[] | null | undefined): FieldError[] {
  const all = (errors ?? []).filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf');
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of all) {
    const params = e.params as { additionalProperty?: string; missingProperty?: string; type?: unknown };
    const member = params.additionalProperty ?? params.missingProperty;
    const path = member === undefined ? e.instancePath : `${e.instancePath}/${escape(member)}`;
    if (params.type === 'null' && all.some((o) => o !== e && o.instancePath.startsWith(e.instancePath))) continue;
    const pointer = where === 'body' ? path || '' : `${where}:${path.replace(/^\//, '')}`;
    const key = `${pointer}\u0000${e.keyword}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const tagField = where === 'header' && e.keyword === 'pattern' && TAG_FIELDS.has(path.slice(1)) ? (path.slice(1) as TagField) : undefined;
    out.push(tagField ? malformedTagProblem(tagField).extra.errors[0] : { pointer, rule: e.keyword, message: e.message ?? 'invalid' });
    if (out.length === MAX_FIELD_ERRORS) break;
  }
  return out;
}
