/**
 * An operation that takes `Idempotency-Key` gets the key's handling from the pipeline
 * (src/http/rest/idempotency.ts): the same key with another request is 422
 * IDEMPOTENCY_KEY_REUSED, and a key whose first request is still running is 409
 * IDEMPOTENCY_KEY_IN_USE with `Retry-After`. Those are answers of the operation, so its
 * contract declares them: a 422, and a 409 that declares `Retry-After`
 * (`components.responses.E409InFlight`, or a 409 of its own with the header). The server
 * answers only what an operation declares (an undeclared status is its own bug, a 500),
 * so without this check an operation added tomorrow with the key would answer a reused
 * key with a 500; with it, codegen names what is missing.
 */
import { declaresHeader, declaresHeaderParameter, type Json } from './deref';

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete'] as const;
const HEADER = 'idempotency-key';

/** What is wrong with the contract's Idempotency-Key operations (empty when each declares its 409 and 422). */
export function idempotencyRuleProblems(doc: Json): string[] {
  const problems: string[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op || !declaresHeaderParameter(doc, item, op, HEADER)) continue;
      const responses = (op.responses ?? {}) as Json;
      const where = `${method.toUpperCase()} ${path}`;
      if (!responses['422']) problems.push(`${where}: takes Idempotency-Key but declares no "422" (IDEMPOTENCY_KEY_REUSED; declare {$ref: '#/components/responses/E422'})`);
      if (responses['409'] === undefined) problems.push(`${where}: takes Idempotency-Key but declares no "409" (IDEMPOTENCY_KEY_IN_USE; declare {$ref: '#/components/responses/E409InFlight'})`);
      else if (!declaresHeader(doc, responses['409'], 'Retry-After')) problems.push(`${where}: its "409" must declare Retry-After (IDEMPOTENCY_KEY_IN_USE carries it)`);
    }
  }
  return problems;
}
