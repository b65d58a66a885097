/**
 * A deprecated version (`info.x-api-versions` with `deprecated` and `sunset`) is announced
 * to clients twice: at run time, by the `Deprecation`, `Sunset` and `Link` headers of its
 * responses (src/http/rest/deprecation.ts), and in the contract, by its `/v<n>/`
 * operations marked `deprecated: true` with `x-sunset: <YYYY-MM-DD>`, the sunset's day.
 * The second is what a generated client shows its developers (the SDK's types mark the
 * operations @deprecated) and what the compatibility gate reads: deleting those paths
 * passes only once the marked sunset has passed (oasdiff `api-path-removed-with-deprecation`).
 * This check keeps the two the same, so a version deprecated in `x-api-versions` alone
 * fails codegen instead of leaving its removal refused on the day it was announced for.
 */

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'] as const;

type Json = Record<string, unknown>;

/** What is wrong with the deprecated versions' operations (empty when each carries the marks). */
export function sunsetRuleProblems(doc: Json): string[] {
  const problems: string[] = [];
  const versions = ((doc.info as Json | undefined)?.['x-api-versions'] ?? []) as Json[];
  for (const v of versions) {
    // A date-time (codegen/openapi.ts `versionsModule` refuses any other); the day is its first ten characters.
    if (typeof v.sunset !== 'string') continue;
    const day = new Date(v.sunset).toISOString().slice(0, 10);
    const prefix = `/v${Number(v.version)}/`;
    for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
      if (!path.startsWith(prefix)) continue;
      for (const method of METHODS) {
        const op = item[method] as Json | undefined;
        if (!op) continue;
        const where = `${method.toUpperCase()} ${path}`;
        if (op.deprecated !== true) problems.push(`${where}: version ${Number(v.version)} is deprecated (info.x-api-versions): mark the operation \`deprecated: true\``);
        if (op['x-sunset'] !== day) problems.push(`${where}: \`x-sunset\` must be "${day}", the sunset of version ${Number(v.version)} (got ${JSON.stringify(op['x-sunset'])})`);
      }
    }
  }
  return problems;
}
