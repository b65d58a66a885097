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
 *
 * An operation deprecated on its own (`deprecated: true` outside a deprecated version) says
 * when in `x-deprecated-at` and until when in `x-sunset` (days), and where the migration
 * is explained in `x-deprecation-link` (optional): codegen turns them into the same three
 * headers, which the pipeline adds to every response of that operation
 * (`deprecationFields`, the route table's `deprecation`).
 */

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'] as const;

type Json = Record<string, unknown>;

const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** A real calendar day, `YYYY-MM-DD` (`2026-02-30` is not one: Date would roll it over to March 2). */
const isDay = (v: unknown): v is string => typeof v === 'string' && DAY.test(v) && !Number.isNaN(Date.parse(v)) && new Date(`${v}T00:00:00Z`).toISOString().slice(0, 10) === v;

/** The versions `info.x-api-versions` marks deprecated (with a sunset). */
function deprecatedVersions(doc: Json): Set<number> {
  const versions = ((doc.info as Json | undefined)?.['x-api-versions'] ?? []) as Json[];
  return new Set(versions.filter((v) => typeof v.sunset === 'string').map((v) => Number(v.version)));
}

/** Whether `path` belongs to a version deprecated as a whole (its responses carry that version's headers). */
const inDeprecatedVersion = (doc: Json, path: string): boolean => {
  const m = /^\/v(\d+)\//.exec(path);
  return m !== null && deprecatedVersions(doc).has(Number(m[1]));
};

/** The marks of an operation's deprecation. */
export interface DeprecationMarks {
  deprecated?: unknown;
  'x-deprecated-at'?: unknown;
  'x-sunset'?: unknown;
  'x-deprecation-link'?: unknown;
}

/**
 * The header fields, as flat name-value pairs, that every response of an operation
 * deprecated on its own carries: `Deprecation: @<unix seconds>` (RFC 9745) from
 * `x-deprecated-at`, `Sunset` (RFC 8594) at the end of the `x-sunset` day, and
 * `Link: <x-deprecation-link>; rel="deprecation"` when given. Null for an operation not
 * deprecated, or deprecated with its version (whose responses carry the version's).
 */
export function deprecationFields(doc: Json, path: string, op: DeprecationMarks): string[] | null {
  if (op.deprecated !== true || inDeprecatedVersion(doc, path) || !isDay(op['x-deprecated-at']) || !isDay(op['x-sunset'])) return null;
  const fields = ['Deprecation', `@${Date.parse(`${op['x-deprecated-at']}T00:00:00Z`) / 1000}`, 'Sunset', new Date(`${op['x-sunset']}T23:59:59Z`).toUTCString()];
  const link = op['x-deprecation-link'];
  if (typeof link === 'string') fields.push('Link', `<${link}>; rel="deprecation"; type="text/html"`);
  return fields;
}

/** What is wrong with the deprecated operations (empty when each carries the marks). */
export function sunsetRuleProblems(doc: Json): string[] {
  const problems: string[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    if (inDeprecatedVersion(doc, path)) continue;
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const marks = ['x-deprecated-at', 'x-sunset', 'x-deprecation-link'].filter((k) => op[k] !== undefined);
      if (op.deprecated !== true) {
        if (marks.length > 0) problems.push(`${where}: ${marks.map((k) => `\`${k}\``).join(', ')} without \`deprecated: true\``);
        continue;
      }
      if (!isDay(op['x-deprecated-at'])) problems.push(`${where}: a deprecated operation says since when in \`x-deprecated-at: <YYYY-MM-DD>\` (got ${JSON.stringify(op['x-deprecated-at'])})`);
      if (!isDay(op['x-sunset'])) problems.push(`${where}: a deprecated operation says until when in \`x-sunset: <YYYY-MM-DD>\` (got ${JSON.stringify(op['x-sunset'])})`);
      else if (isDay(op['x-deprecated-at']) && op['x-sunset'] < op['x-deprecated-at']) problems.push(`${where}: \`x-sunset\` comes before \`x-deprecated-at\``);
      const link = op['x-deprecation-link'];
      if (link !== undefined && (typeof link !== 'string' || /[\s<>]/.test(link) || link === '')) problems.push(`${where}: \`x-deprecation-link\` must be a URL`);
    }
  }
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
