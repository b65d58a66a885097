/**
 * Every operation may answer 503 SERVICE_UNAVAILABLE: when the store cannot be reached
 * (src/http/problem.ts maps the store's `StoreUnavailableError`) and, on any path, while
 * the instance drains for shutdown (src/http/drain.ts). Both are answers a client must be
 * ready for, so the contract declares them on each operation, referring to the one shared
 * response (`components.responses.E503`: problem+json with `Retry-After`); a tool that
 * reads the contract (a client generator, a fuzzer, a mock server) then knows them.
 *
 * An operation may declare its own 503 instead (readiness names the engine that is down),
 * as long as it carries `Retry-After` too. This check keeps the contract and the server's
 * behaviour the same: an operation added tomorrow without it fails codegen.
 *
 * Two more answers come from the pipeline to any operation, before its handler and whatever
 * the handler does, so each operation declares them too (ALWAYS_ANSWERED): 412 (an `If-Match`
 * is judged on every request, RFC 9110 13.2.2) and 413 (a body over the limit, sent to any
 * operation, one that takes none included).
 */
import { declaresHeader, type Json } from './deref';

/** The shared 503. */
export const UNAVAILABLE_RESPONSE_REF = '#/components/responses/E503';

/** OPTIONS is left to codegen/options.ts, whose one shared form includes this 503. */
const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete'] as const;

/** Statuses the pipeline answers to any operation, with the shared response to declare for each method. */
const ALWAYS_ANSWERED: readonly { status: string; why: string; ref: (method: (typeof METHODS)[number]) => string; shared: readonly string[] }[] = [
  {
    status: '412',
    why: 'an If-Match is judged on every request',
    ref: (m) => (m === 'get' ? 'E412Read' : m === 'head' ? 'HeadError' : m === 'post' ? 'E412Create (a create) or E412' : 'E412'),
    shared: ['E412Read', 'E412Create', 'E412', 'HeadError'],
  },
  { status: '413', why: 'a body over the limit is refused whatever the operation', ref: (m) => (m === 'head' ? 'HeadError' : 'E413'), shared: ['E413', 'HeadError'] },
];
const RESPONSES = '#/components/responses/';

/** What is wrong with the contract's 503s, 412s and 413s (empty when every operation declares them). */
export function unavailableRuleProblems(doc: Json): string[] {
  const problems: string[] = [];
  const shared = ((doc.components as Json | undefined)?.responses as Json | undefined)?.E503 as Json | undefined;
  if (!shared) problems.push(`${UNAVAILABLE_RESPONSE_REF} is missing`);
  else if (!declaresHeader(doc, shared, 'Retry-After')) problems.push(`${UNAVAILABLE_RESPONSE_REF} must declare Retry-After`);
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const answer = ((op.responses ?? {}) as Record<string, Json>)['503'];
      if (!answer) problems.push(`${method.toUpperCase()} ${path}: no "503" (every operation may answer it; declare {$ref: ${UNAVAILABLE_RESPONSE_REF}})`);
      else if (answer.$ref !== UNAVAILABLE_RESPONSE_REF && !declaresHeader(doc, answer, 'Retry-After')) problems.push(`${method.toUpperCase()} ${path}: its own "503" must declare Retry-After`);
      for (const { status, why, ref, shared: family } of ALWAYS_ANSWERED) {
        const declared = ((op.responses ?? {}) as Record<string, Json>)[status];
        const to = typeof declared?.$ref === 'string' ? declared.$ref : undefined;
        if (!declared) problems.push(`${method.toUpperCase()} ${path}: no "${status}" (${why}; declare {$ref: ${RESPONSES}${ref(method)}})`);
        // A shared response of another status (a "412" that refers to E413) is a slip: its own response, or one of its status.
        else if (to !== undefined && !family.some((name) => to === `${RESPONSES}${name}`))
          problems.push(`${method.toUpperCase()} ${path}: its "${status}" refers to ${to}, not a ${status} (declare {$ref: ${RESPONSES}${ref(method)}})`);
      }
    }
  }
  return problems;
}
