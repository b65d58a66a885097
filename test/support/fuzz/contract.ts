/**
 * The contract fuzzer's view of contracts/openapi.yaml: each operation of the generated
 * route table with its declared parameters (path-level and operation-level, `$ref`s
 * resolved), request body schemas by media type, and for each response status its media
 * types and required headers. The route table's Ajv validators stay the judges; this
 * file only says what to generate and what the answer must carry.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { routes, type RouteSpec } from '../../../generated/openapi/routes';

export type Schema = { [k: string]: unknown };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const DOC: any = parse(readFileSync(join(__dirname, '../../../contracts/openapi.yaml'), 'utf8'));

/** Follows `$ref`s (local, `#/...`) until a schema that is not one. */
export function deref<T = Schema>(node: unknown): T {
  let n = node as Schema;
  for (let i = 0; i < 20 && n && typeof n.$ref === 'string'; i++) {
    const ref = n.$ref;
    if (!ref.startsWith('#/')) throw new Error(`external $ref ${ref}`);
    n = ref
      .slice(2)
      .split('/')
      .reduce<Schema>((acc, k) => acc[k.replace(/~1/g, '/').replace(/~0/g, '~')] as Schema, DOC);
  }
  return n as T;
}

export interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
  /** The value the contract gives as its example (the parameter's `example` or first `examples` entry, else its schema's). */
  example?: unknown;
}

/** A declared parameter as the fuzzer reads it, its example found wherever OpenAPI lets the contract put one. */
function paramOf(raw: unknown): Param {
  const p = deref<Param & { schema: Schema; example?: unknown; examples?: Record<string, { value?: unknown }> }>(raw);
  const schema = deref(p.schema);
  const example = p.example ?? Object.values(p.examples ?? {})[0]?.value ?? schema.example ?? (Array.isArray(schema.examples) ? (schema.examples as unknown[])[0] : undefined);
  return { name: p.name, in: p.in, required: !!p.required, schema: p.schema, ...(example === undefined ? {} : { example }) };
}

export interface DeclaredResponse {
  /** Media types of the body, as the contract spells them (empty: no body). */
  mediaTypes: string[];
  /** Headers the contract marks `required: true`, with their schemas. */
  requiredHeaders: { name: string; schema: Schema }[];
  /** Every declared header, with its schema. */
  headers: { name: string; schema: Schema }[];
}

export interface FuzzOperation {
  route: RouteSpec;
  operationId: string;
  params: Param[];
  /** Media type -> schema of the request body, or null when the operation takes none. */
  body: Record<string, Schema> | null;
  responses: Record<string, DeclaredResponse>;
  /** Whether the operation requires the bearer token (then 401 and 429 are always possible). */
  secured: boolean;
}

function operationNode(route: RouteSpec): { pathItem: Schema; op: Schema } {
  const pathItem = DOC.paths[route.path] as Schema;
  const op = pathItem[route.method.toLowerCase()] as Schema;
  if (!op || op.operationId !== route.operationId) throw new Error(`${route.operationId} not found at ${route.method} ${route.path}`);
  return { pathItem, op };
}

/** An operation's responses by status, `$ref`s resolved. */
function declaredResponses(op: Schema): Record<string, DeclaredResponse> {
  const responses: Record<string, DeclaredResponse> = {};
  for (const [status, raw] of Object.entries(op.responses as Record<string, unknown>)) {
    const r = deref<{ content?: Record<string, unknown>; headers?: Record<string, unknown> }>(raw);
    const headers = Object.entries(r.headers ?? {}).map(([name, h]) => {
      const hd = deref<{ required?: boolean; schema: Schema }>(h);
      return { name, schema: hd.schema, required: !!hd.required };
    });
    responses[status] = {
      mediaTypes: Object.keys(r.content ?? {}),
      headers: headers.map(({ name, schema }) => ({ name, schema })),
      requiredHeaders: headers.filter((h) => h.required).map(({ name, schema }) => ({ name, schema })),
    };
  }
  return responses;
}

function describe(route: RouteSpec): FuzzOperation {
  const { pathItem, op } = operationNode(route);
  const byKey = new Map<string, Param>();
  for (const raw of [...((pathItem.parameters as unknown[]) ?? []), ...((op.parameters as unknown[]) ?? [])]) {
    const p = paramOf(raw);
    byKey.set(`${p.in}:${p.name}`, p);
  }
  let body: FuzzOperation['body'] = null;
  if (op.requestBody) {
    const rb = deref<{ content: Record<string, { schema: Schema }> }>(op.requestBody);
    body = Object.fromEntries(Object.entries(rb.content).map(([mt, c]) => [mt, c.schema]));
  }
  const responses = declaredResponses(op);
  const security = (op.security ?? DOC.security) as unknown[];
  return { route, operationId: route.operationId, params: [...byKey.values()], body, responses, secured: security.length > 0 };
}

export const OPERATIONS: readonly FuzzOperation[] = routes.map(describe);

/**
 * A path's `options` operation: OPTIONS, answered by the pipeline's one rule on every path
 * (no handler, so no route of its own), with what the contract says it answers.
 */
export interface OptionsOperation {
  operationId: string;
  path: string;
  /** The path's parameters (path-level), for filling the template. */
  params: Param[];
  /** What `Allow` must list: the path's declared methods, HEAD wherever GET is, and OPTIONS. */
  allow: string[];
  responses: Record<string, DeclaredResponse>;
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete'] as const;

export const OPTIONS_OPERATIONS: readonly OptionsOperation[] = Object.entries(DOC.paths as Record<string, Schema>)
  .filter(([, item]) => item.options !== undefined)
  .map(([path, item]) => {
    const declared = METHODS.filter((m) => item[m] !== undefined).map((m) => m.toUpperCase());
    const allow = [...new Set([...declared, ...(declared.includes('GET') ? ['HEAD'] : []), 'OPTIONS'])];
    const params = ((item.parameters as unknown[] | undefined) ?? []).map(paramOf);
    const op = item.options as Schema;
    return { operationId: op.operationId as string, path, params, allow, responses: declaredResponses(op) };
  });

/** Base media type, lowercased, spaces removed around `;` (`a/b; version=1` keeps its parameters). */
export const normalizeMediaType = (mt: string): string =>
  mt
    .toLowerCase()
    .replace(/\s*;\s*/g, '; ')
    .replace(/;\s*charset=utf-8/i, '')
    .trim();
