/**
 * The SDK's contract-derived parts: `npm run codegen` writes them into the
 * `@orderline/sdk` package (sdk/src/generated/), so the package builds and ships
 * without reaching into the server's tree. They are the same texts the server's
 * generated/ holds (one generator each), adapted only where the package needs it:
 * relative imports carry `.js` (the package is published as ESM and CJS, and NodeNext
 * resolution wants the extension), and the allowlist manifest stays server-side.
 *
 * - openapi.ts     `paths` / `components` of contracts/openapi.yaml (openapi-fetch's types),
 *                  plus a named type for each string the contract marks `x-extensible-enum`
 *                  (an open set: order status, currency, problem code), `"a" | "b" | (string & {})`:
 *                  the known values autocomplete and any other string still type-checks;
 * - messages.ts    the AsyncAPI message types (the realtime client's messages), without
 *                  openapi-typescript's empty `paths`/`webhooks`/`$defs`/`operations`, which
 *                  mean nothing for messages, plus the open sets of the message payloads
 *                  (`ErrorMessageCode`, `ResyncMessageReason`), as for openapi.ts;
 * - operations.ts  result/variables types and typed documents of contracts/operations/;
 * - persisted.ts   each operation's exact text and its hash, by name (written by codegen/graphql.ts).
 * The behaviour around them is hand-written once, in sdk/src/.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';

export const SDK_GENERATED = 'sdk/src/generated';

const COPIES: Record<string, string> = {
  'generated/openapi/types.ts': `${SDK_GENERATED}/openapi.ts`,
  'generated/asyncapi/messages.ts': `${SDK_GENERATED}/messages.ts`,
  'generated/graphql/operations.ts': `${SDK_GENERATED}/operations.ts`,
};

/** What openEnums reads of the contract. */
interface SchemaJson {
  'x-extensible-enum'?: unknown;
  properties?: Record<string, SchemaJson>;
}
interface Json {
  components?: { schemas?: Record<string, SchemaJson> };
}
interface AsyncApiJson {
  components?: { messages?: Record<string, { payload?: SchemaJson }> };
}

/**
 * The open sets of a contract's schemas (`x-extensible-enum`, on a schema or on a property
 * of one), appended to openapi-typescript's text as named types: `OrderStatus`,
 * `Currency`, `ProblemCode` (schema + property name) of contracts/openapi.yaml's
 * components; `ErrorMessageCode`, `ResyncMessageReason` of contracts/asyncapi.yaml's
 * message payloads. openapi-typescript renders them as plain `string`, and they stay so
 * inside `paths`/`components`: openapi-fetch's `Readable` maps every `T extends object`,
 * which `string & {}` is.
 */
export function openEnums(schemas: Record<string, SchemaJson> | undefined): string {
  const lines: string[] = [];
  const add = (name: string, values: unknown[], where: string) => {
    lines.push(`/** Open set (\`x-extensible-enum\` of ${where}): the known values autocomplete; clients must accept others. */`);
    lines.push(`export type ${name} = ${values.map((v) => JSON.stringify(String(v))).join(' | ')} | (string & {});`);
  };
  for (const [name, schema] of Object.entries(schemas ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    if (Array.isArray(schema['x-extensible-enum'])) add(name, schema['x-extensible-enum'], name);
    for (const [prop, sub] of Object.entries(schema.properties ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
      if (Array.isArray(sub['x-extensible-enum'])) add(`${name}${prop.charAt(0).toUpperCase()}${prop.slice(1)}`, sub['x-extensible-enum'], `${name}.${prop}`);
    }
  }
  return lines.length ? `\n${lines.join('\n')}\n` : '';
}

/** openapi-typescript's document-level types, empty for a view that holds messages only. */
const EMPTY_DOCUMENT_TYPES = /^export type (paths|webhooks|\$defs|operations) = Record<string, never>;\n/gm;

export function generateSdk(serverFiles: Record<string, string>, root: string): Record<string, string> {
  const contract = YAML.parse(readFileSync(join(root, 'contracts/openapi.yaml'), 'utf8')) as Json;
  const realtime = YAML.parse(readFileSync(join(root, 'contracts/asyncapi.yaml'), 'utf8')) as AsyncApiJson;
  const payloads = Object.fromEntries(Object.entries(realtime.components?.messages ?? {}).map(([name, message]) => [name, message.payload ?? {}]));
  const out: Record<string, string> = {};
  for (const [from, to] of Object.entries(COPIES)) {
    const text = serverFiles[from];
    if (text === undefined) throw new Error(`codegen: ${from} was not generated, so ${to} cannot be`);
    if (/^import (?!type \{ TypedDocumentNode)/m.test(text)) throw new Error(`codegen: ${from} gained an import the SDK copy cannot carry`);
    out[to] = text;
  }
  out[`${SDK_GENERATED}/openapi.ts`] = `${out[`${SDK_GENERATED}/openapi.ts`]}${openEnums(contract.components?.schemas)}`;
  out[`${SDK_GENERATED}/messages.ts`] = `${out[`${SDK_GENERATED}/messages.ts`].replace(EMPTY_DOCUMENT_TYPES, '')}${openEnums(payloads)}`;
  return out;
}
