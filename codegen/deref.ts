/**
 * A local `$ref` (`#/components/...`) of a parsed contract followed to what it names (through
 * refs to refs): the one reader codegen's contract checks share. A node that is no ref is
 * itself; a ref to nothing, or a missing node, is `{}` (the checks then find what they look
 * for missing, and say so).
 */
export type Json = Record<string, unknown>;

export function deref(doc: Json, node: unknown, hops = 0): Json {
  if (typeof node !== 'object' || node === null) return {};
  const ref = (node as Json).$ref;
  if (typeof ref !== 'string' || hops >= 16) return node as Json;
  let at: unknown = doc;
  for (const part of ref.replace(/^#\//, '').split('/')) at = (at as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return deref(doc, at, hops + 1);
}

/** A response's header names as the contract declares them: every one, or only the required ones. */
export function headerNames(doc: Json, response: Json, onlyRequired = false): string[] {
  const headers = (response.headers ?? {}) as Record<string, unknown>;
  return Object.entries(headers)
    .filter(([, h]) => !onlyRequired || deref(doc, h).required === true)
    .map(([name]) => name);
}

/** An operation's parameters, its path item's first (OpenAPI: the operation's own are added to them), refs followed. */
export const operationParameters = (doc: Json, item: Json, op: Json): Json[] => [...((item.parameters ?? []) as unknown[]), ...((op.parameters ?? []) as unknown[])].map((node) => deref(doc, node));

/** Whether an operation declares the header parameter `name` (case-insensitive), on itself or its path item. */
export const declaresHeaderParameter = (doc: Json, item: Json, op: Json, name: string): boolean =>
  operationParameters(doc, item, op).some((p) => p.in === 'header' && typeof p.name === 'string' && p.name.toLowerCase() === name.toLowerCase());

/** Whether `response` (a ref followed) declares the header `name` (field names are case-insensitive). */
export const declaresHeader = (doc: Json, response: unknown, name: string): boolean => headerNames(doc, deref(doc, response)).some((h) => h.toLowerCase() === name.toLowerCase());
