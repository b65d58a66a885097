/**
 * The values of an `x-extensible-enum` the released contract listed. The extension says
 * "these are the values sent today; accept new ones", so clients code against each listed
 * value: the SDK retries on the Problem code `IDEMPOTENCY_KEY_IN_USE`, a partner maps
 * `NOT_FOUND` to its own error. Adding a value is the promised kind of change; removing
 * or renaming one silently stops what such a client does on it. oasdiff judges these
 * lists only where a request sends them (`request-property-x-extensible-enum-value-removed`);
 * on a response, a dropped value is fine for a plain enum but not for a published code
 * list, so the gate judges them here: every released value stays, request or response.
 *
 * A list is compared at the same place in both documents; a node that moved or went away
 * is oasdiff's to report (as a removed or retyped property).
 */
import { nodeLabel, pointerOf, segmentsOf, verbOf } from './causes';
import { asRecord, type Finding, type Kind } from './types';

/** The contract a list is in, as its findings name it. */
export interface ListSource {
  kind: Kind;
  group: string;
  contract: string;
}
const OPENAPI: ListSource = { kind: 'openapi', group: 'every REST version', contract: 'contracts/openapi.yaml' };
/** contracts/asyncapi.yaml: the open sets of message payloads (ErrorMessage.code, ResyncMessage.reason). */
export const ASYNCAPI: ListSource = { kind: 'asyncapi', group: 'message payloads', contract: 'contracts/asyncapi.yaml' };

const KEY = 'x-extensible-enum';
const RULE = 'x-extensible-enum-value-removed';

/** Every `x-extensible-enum` list of a parsed document, by the pointer of the schema that holds it. */
function listsOf(doc: unknown): Map<string, unknown[]> {
  const lists = new Map<string, unknown[]>();
  const visit = (node: unknown, path: string[]): void => {
    if (Array.isArray(node)) node.forEach((item, i) => visit(item, [...path, String(i)]));
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === KEY && Array.isArray(value)) lists.set(pointerOf(path), value);
        else visit(value, [...path, key]);
      }
    }
  };
  visit(doc, []);
  return lists;
}

/** The schema at `pointer`, or undefined when the current document no longer has it there. */
function schemaAt(doc: unknown, pointer: string): Record<string, unknown> | undefined {
  let node: unknown = doc;
  for (const key of segmentsOf(pointer)) {
    if (!node || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node && typeof node === 'object' && !Array.isArray(node) ? asRecord(node) : undefined;
}

/**
 * @param reported whether oasdiff already reported removing `value` (its request-side rule),
 *   so one removal is not listed twice.
 */
export function checkExtensibleEnums(released: Record<string, unknown>, current: Record<string, unknown>, reported: (value: string) => boolean = () => false, source: ListSource = OPENAPI): Finding[] {
  const findings: Finding[] = [];
  for (const [pointer, values] of listsOf(released)) {
    const schema = schemaAt(current, pointer);
    if (!schema) continue;
    const listed = (v: unknown): unknown[] => (Array.isArray(v) ? (v as unknown[]) : []);
    const kept = new Set([...listed(schema[KEY]), ...listed(schema.enum)].map(String));
    const label = nodeLabel(pointer);
    for (const value of values.map(String)) {
      if (kept.has(value) || reported(value)) continue;
      findings.push({
        kind: source.kind,
        group: source.group,
        location: `\`${label}\``,
        message: `removed the value \`${value}\` from its x-extensible-enum: released clients that act on it no longer get it (add values; never remove or rename one)`,
        rule: RULE,
        cause: `\`${label}\` ${verbOf(RULE)}`,
        contract: source.contract,
        pointer: `${pointer}/${KEY}`,
      });
    }
  }
  return findings;
}
