/**
 * The parameter serializations the pipeline reads (src/http/rest/operations.ts
 * `readParameters`): path and header parameters `style: simple` with a scalar schema, query
 * parameters `style: form` with `explode: true` (OpenAPI's defaults: `?tag=a&tag=b` for an
 * array), each described by a `schema`. Anything else would be served wrong without a
 * word: `explode: false` (`?tag=a,b`) would reach the handler as one string, a
 * `deepObject` (`?filter[status]=x`) as a member named `filter[status]`, a cookie never.
 * So codegen refuses such a parameter, naming it, until the pipeline learns to read it.
 * It also refuses a `default` its own schema refuses (every request leaving the parameter
 * out would be a 400 for a value the client never sent), and a write that declares
 * `If-Match` without `If-None-Match`: such a write judges its own preconditions, and a
 * header it does not declare never reaches its handler, so `If-None-Match: *` would be
 * ignored where RFC 9110 13.1.2 wants a 412. And it refuses two paths that differ only in their
 * parameters' names (`/orders/{id}` beside `/orders/{orderId}`): the matcher would serve one.
 */
import { deref, operationParameters, type Json } from './deref';
import Ajv2020 from 'ajv/dist/2020';

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'] as const;
const DEFAULT_STYLE = { path: 'simple', header: 'simple', query: 'form' } as const;

/** Judges each `default` against its parameter's schema (one instance for the whole contract). */
const defaults = new Ajv2020({ strict: false });

const isLocation = (v: unknown): v is keyof typeof DEFAULT_STYLE => v === 'path' || v === 'header' || v === 'query';

/** Why the pipeline cannot read `p` as declared, or undefined when it can. */
function problemOf(doc: Json, p: Json): string | undefined {
  if (!isLocation(p.in)) return `\`in: ${String(p.in)}\` is not read (path, query and header are)`;
  if (p.content !== undefined || typeof p.schema !== 'object' || p.schema === null) return 'give it a `schema` (`content` is not read)';
  const style = p.style ?? DEFAULT_STYLE[p.in];
  if (style !== DEFAULT_STYLE[p.in]) return `\`style: ${typeof style === 'string' ? style : JSON.stringify(style)}\` is not read (a ${p.in} parameter is \`${DEFAULT_STYLE[p.in]}\`)`;
  const schema = deref(doc, p.schema);
  if (schema.type === 'object') return 'an object parameter is not read: give each member a parameter of its own';
  if (p.in === 'query' && schema.type === 'array' && p.explode === false) return '`explode: false` is not read: a query array is the repeated parameter (`?a=1&a=2`)';
  if (p.in !== 'query' && schema.type === 'array') return `an array ${p.in} parameter is not read`;
  const items = schema.type === 'array' && typeof schema.items === 'object' && schema.items !== null ? deref(doc, schema.items) : undefined;
  if (items?.type === 'object' || items?.type === 'array') return 'an array of objects or arrays is not read: a query array holds scalars';
  if (schema.default !== undefined && !JSON.stringify(schema).includes('"$ref"') && !defaults.validate(schema, schema.default)) {
    return `its \`default\` ${JSON.stringify(schema.default)} does not fit its own schema: every request without it would be refused`;
  }
  return undefined;
}

/** Every parameter the pipeline could not read as the contract declares it (empty when none). */
export function parameterRuleProblems(doc: Json): string[] {
  const problems: string[] = [];
  // Two templates that differ only in their parameters' names name the same URLs: the matcher would serve one of them.
  const byShape = new Map<string, string>();
  for (const path of Object.keys(doc.paths ?? {})) {
    const shape = path.replace(/\{[^}]*\}/g, '{}');
    const first = byShape.get(shape);
    if (first !== undefined) problems.push(`${path}: names the same URLs as ${first} (only the parameter names differ): one path, one name per parameter`);
    else byShape.set(shape, path);
  }
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const params = operationParameters(doc, item, op);
      for (const p of params) {
        const problem = problemOf(doc, p);
        if (problem) problems.push(`${method.toUpperCase()} ${path}: parameter \`${String(p.name)}\`: ${problem}`);
      }
      const headers = new Set(params.filter((p) => p.in === 'header' && typeof p.name === 'string').map((p) => String(p.name).toLowerCase()));
      if (headers.has('if-match') && !headers.has('if-none-match')) {
        problems.push(`${method.toUpperCase()} ${path}: declares \`If-Match\` but not \`If-None-Match\`: declare both (as #/components/parameters/IfNoneMatchWrite) and judge them together in the handler`);
      }
      // The reverse, on a write: without If-Match the pipeline judges it as a write on a resource with no
      // entity tag (If-None-Match: * always fails), so a create-if-absent could never succeed.
      if (method !== 'get' && method !== 'head' && headers.has('if-none-match') && !headers.has('if-match')) {
        problems.push(`${method.toUpperCase()} ${path}: declares \`If-None-Match\` but not \`If-Match\`: a write that judges one judges both (declare #/components/parameters/IfMatch too) in the handler`);
      }
    }
  }
  return problems;
}
