/**
 * OPTIONS is one rule on every path (RFC 9110 9.3.7): the pipeline answers it before
 * authentication, by the route table's `allow`, with a 204 (and the CORS preflight
 * fields when CORS asks): src/http/pipeline.ts `options`. The contract declares that
 * answer on each path as an `options` operation referring to the one shared response,
 * so tools that read the contract (a client generator, a fuzzer, a mock server) know
 * it. No handler is generated for it: there is nothing per path to implement.
 *
 * This check keeps the contract and the pipeline's rule the same: every path declares
 * it, in exactly the shared form.
 */

import { UNAVAILABLE_RESPONSE_REF } from './unavailable';

/** The shared response every `options` operation answers. */
export const OPTIONS_RESPONSE_REF = '#/components/responses/Options';
/** The 503 every operation may answer, OPTIONS included: a draining server answers every request so. */
const UNAVAILABLE_REF = UNAVAILABLE_RESPONSE_REF;

type Json = Record<string, unknown>;

/** What is wrong with the contract's `options` operations (empty when every path declares the rule). */
export function optionsRuleProblems(doc: Json): string[] {
  const problems: string[] = [];
  if (!(doc.components as Json | undefined)?.responses || !((doc.components as Json).responses as Json).Options) problems.push(`${OPTIONS_RESPONSE_REF} is missing`);
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    const op = item.options as Json | undefined;
    if (!op) {
      problems.push(`${path}: no \`options\` operation (every path answers OPTIONS; declare it with ${OPTIONS_RESPONSE_REF})`);
      continue;
    }
    const responses = (op.responses ?? {}) as Record<string, Json>;
    const statuses = Object.keys(responses);
    const shared = statuses.length === 2 && responses['204']?.$ref === OPTIONS_RESPONSE_REF && responses['503']?.$ref === UNAVAILABLE_REF;
    if (!shared) problems.push(`${path}: \`options\` must answer only "204": {$ref: ${OPTIONS_RESPONSE_REF}} and "503": {$ref: ${UNAVAILABLE_REF}}`);
    if (!Array.isArray(op.security) || op.security.length > 0) problems.push(`${path}: \`options\` must say \`security: []\` (it is answered before authentication)`);
    if (op.parameters !== undefined || op.requestBody !== undefined) problems.push(`${path}: \`options\` takes no parameters and no body of its own`);
  }
  return problems;
}
