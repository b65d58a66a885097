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
 *
 * And the answers the pipeline gives an operation because of what it declares (ANSWERED_WHEN):
 * 400 to one with parameters or a body (its generated validators refuse what the schemas do
 * not take: an undeclared 400 from them would be a 500, since an operation's answer must be one
 * it declares), 401 and 429 to one that requires a token (authentication, the per-account rate
 * limit), 406 to one that declares `Accept`, 415 to one that takes a body, 428 to one that
 * declares `If-Match`.
 */
import { declaresHeader, declaresHeaderParameter, operationParameters, type Json } from './deref';

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

/** Statuses the pipeline answers an operation because of what it declares, with the shared response to declare for each. */
const ANSWERED_WHEN: readonly { status: string; why: string; when: (doc: Json, item: Json, op: Json) => boolean; ref: (method: (typeof METHODS)[number]) => string }[] = [
  {
    status: '400',
    why: 'its parameters and body are validated: what their schemas refuse is a 400',
    when: (doc, item, op) => operationParameters(doc, item, op).length > 0 || op.requestBody !== undefined,
    ref: (m) => (m === 'head' ? 'HeadError' : 'E400'),
  },
  { status: '401', why: 'it requires a token', when: (doc, _item, op) => ((op.security ?? doc.security ?? []) as unknown[]).length > 0, ref: (m) => (m === 'head' ? 'HeadE401' : 'E401') },
  {
    status: '429',
    why: 'it requires a token, and the per-account rate limit applies',
    when: (doc, _item, op) => ((op.security ?? doc.security ?? []) as unknown[]).length > 0,
    ref: (m) => (m === 'head' ? 'HeadE429' : 'E429'),
  },
  {
    status: '406',
    why: 'it declares Accept',
    when: (doc, item, op) => declaresHeaderParameter(doc, item, op, 'Accept'),
    ref: (m) => (m === 'head' ? 'HeadError' : 'E406'),
  },
  { status: '415', why: 'it takes a body, whose media type is checked', when: (_doc, _item, op) => op.requestBody !== undefined, ref: () => 'E415' },
  { status: '428', why: 'it declares If-Match, which a write requires', when: (doc, item, op) => declaresHeaderParameter(doc, item, op, 'If-Match'), ref: () => 'E428' },
];

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
      for (const { status, why, when, ref } of ANSWERED_WHEN) {
        if (when(doc, item, op) && !((op.responses ?? {}) as Record<string, Json>)[status]) problems.push(`${method.toUpperCase()} ${path}: no "${status}" (${why}; declare {$ref: ${RESPONSES}${ref(method)}})`);
      }
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
