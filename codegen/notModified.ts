/**
 * A 304 repeats fields of the 200 it stands for (RFC 9110 15.4.5: ETag, Cache-Control,
 * Vary...), and the pipeline builds it so, from the 200 the handler answered
 * (src/http/conditional.ts `notModified`): it adds no field of its own. So a header the
 * contract's 304 requires can only be there when the operation's 200 declares it too (and
 * then the handler's generated type requires it). Without this check, an operation added
 * with the shared `NotModified` 304 and a 200 without `Vary` would answer 304s without the
 * `Vary` its contract promises. Codegen refuses that, naming the operation and the header.
 */
import { deref, headerNames, type Json } from './deref';

const METHODS = ['get', 'head'] as const;

/** What is wrong with the contract's 304s (empty when each one's required headers are declared on its 200). */
export function notModifiedRuleProblems(doc: Json): string[] {
  const problems: string[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const responses = ((item[method] as Json | undefined)?.responses ?? {}) as Record<string, unknown>;
      if (responses['304'] === undefined) continue;
      const ok = responses['200'] === undefined ? undefined : deref(doc, responses['200']);
      if (!ok) {
        problems.push(`${method.toUpperCase()} ${path}: a "304" stands for a "200", which it does not declare`);
        continue;
      }
      const declared = new Set(headerNames(doc, ok, false).map((n) => n.toLowerCase()));
      const missing = headerNames(doc, deref(doc, responses['304']), true).filter((n) => !declared.has(n.toLowerCase()));
      if (missing.length > 0) {
        problems.push(
          `${method.toUpperCase()} ${path}: its "304" requires ${missing.join(', ')}, which its "200" does not declare (a 304 repeats the 200's fields: declare and send ${missing.length > 1 ? 'them' : 'it'} on the 200)`,
        );
      }
    }
  }
  return problems;
}
