/**
 * The SDK's contract-derived parts: `npm run codegen` writes them into the
 * `@orderline/sdk` package (sdk/src/generated/), so the package builds and ships
 * without reaching into the server's tree. They are the same texts the server's
 * generated/ holds (one generator each), adapted only where the package needs it:
 * relative imports carry `.js` (the package is published as ESM and CJS, and NodeNext
 * resolution wants the extension), and the allowlist manifest stays server-side.
 *
 * - openapi.ts     `paths` / `components` of contracts/openapi.yaml (openapi-fetch's types);
 * - messages.ts    the AsyncAPI message types (the realtime client's messages);
 * - operations.ts  result/variables types and typed documents of contracts/operations/;
 * - persisted.ts   each operation's exact text and its hash, by name (written by codegen/graphql.ts).
 * The behaviour around them is hand-written once, in sdk/src/.
 */
export const SDK_GENERATED = 'sdk/src/generated';

const COPIES: Record<string, string> = {
  'generated/openapi/types.ts': `${SDK_GENERATED}/openapi.ts`,
  'generated/asyncapi/messages.ts': `${SDK_GENERATED}/messages.ts`,
  'generated/graphql/operations.ts': `${SDK_GENERATED}/operations.ts`,
};

export function generateSdk(serverFiles: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [from, to] of Object.entries(COPIES)) {
    const text = serverFiles[from];
    if (text === undefined) throw new Error(`codegen: ${from} was not generated, so ${to} cannot be`);
    if (/^import (?!type \{ TypedDocumentNode)/m.test(text)) throw new Error(`codegen: ${from} gained an import the SDK copy cannot carry`);
    out[to] = text;
  }
  return out;
}
