/**
 * Security: can every client that authenticated to a released operation still do so?
 *
 * oasdiff 1.15 rates every security change INFO, and misses some altogether (an
 * operation's `security: []` dropped, so that the document's requirement now applies to
 * it); @asyncapi/diff leaves an edited security scheme unclassified. So the gate reads the
 * effective requirements of both contracts itself:
 *
 * - a requirement is a set of schemes, each with scopes, that must all be satisfied; an
 *   operation lists alternatives, any one of which will do (OpenAPI `security`, AsyncAPI 3
 *   `security`: one scheme per alternative). No alternatives, or an empty one, is anonymous.
 * - a client that satisfied a released alternative holds those credentials. It is still
 *   admitted when some current alternative asks for no scheme it lacks, defined as it was
 *   (type, HTTP scheme, place and name of an API key), and no scope it lacks.
 *
 * A released alternative no current one admits is a breaking change. Loosening (a scheme
 * or scope dropped from a requirement, an alternative added, a requirement removed) passes.
 */
import { asRecord, type Finding, type Kind } from './types';

/** Scheme name -> the scopes it needs. */
export type Requirement = Record<string, string[]>;

/** What a client must do to present a scheme's credential. */
export interface SchemeDef {
  type?: unknown;
  scheme?: unknown;
  in?: unknown;
  name?: unknown;
}

const CREDENTIAL_FIELDS = ['type', 'scheme', 'in', 'name'] as const;

/** The fields of a scheme that changed (how a client presents its credential), empty when none. */
export function schemeChanges(released: SchemeDef | undefined, current: SchemeDef | undefined): string[] {
  if (!released) return [];
  if (!current) return ['removed'];
  // An HTTP auth scheme's name is case-insensitive (RFC 9110 11.1): `Bearer` is `bearer`.
  const norm = (f: (typeof CREDENTIAL_FIELDS)[number], v: unknown) => (f === 'scheme' && typeof v === 'string' ? v.toLowerCase() : v);
  return CREDENTIAL_FIELDS.filter((f) => JSON.stringify(norm(f, released[f])) !== JSON.stringify(norm(f, current[f]))).map((f) => `${f}: ${JSON.stringify(released[f])} -> ${JSON.stringify(current[f])}`);
}

/** The released alternatives no current alternative admits. `sameScheme(name)`: the scheme is defined as it was. */
export function refusedAlternatives(released: Requirement[], current: Requirement[], sameScheme: (name: string) => boolean): Requirement[] {
  const admits = (c: Requirement, r: Requirement) => Object.entries(c).every(([name, scopes]) => name in r && sameScheme(name) && scopes.every((s) => r[name].includes(s)));
  const now = current.length === 0 ? [{}] : current;
  return (released.length === 0 ? [{}] : released).filter((r) => !now.some((c) => admits(c, r)));
}

const describe = (r: Requirement) => {
  const names = Object.entries(r).map(([name, scopes]) => (scopes.length ? `${name} (scopes ${scopes.join(', ')})` : name));
  return names.length ? names.join(' + ') : 'no credentials';
};

/** Parsed YAML, read loosely: a contract the gate compares is already known to parse. */
type Doc = Record<string, unknown>;
const obj = asRecord;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** An OpenAPI security list as requirements; undefined when absent (the document's applies). */
function openapiRequirements(v: unknown): Requirement[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.map((r) => Object.fromEntries(Object.entries(obj(r)).map(([name, scopes]) => [name, list(scopes).map(String)])));
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** OpenAPI: every released operation still in the contract, against its current requirement. */
export function checkOpenApiSecurity(released: Doc, current: Doc): Finding[] {
  const schemesOf = (d: Doc) => obj(obj(d.components).securitySchemes);
  const [oldSchemes, newSchemes] = [schemesOf(released), schemesOf(current)];
  const changed = new Map(Object.keys(oldSchemes).map((n) => [n, schemeChanges(obj(oldSchemes[n]), n in newSchemes ? obj(newSchemes[n]) : undefined)]));
  const findings: Finding[] = [];
  for (const [path, item] of Object.entries(obj(released.paths))) {
    for (const method of METHODS.filter((m) => m in obj(item))) {
      const now = obj(obj(obj(current.paths)[path])[method]);
      if (!(method in obj(obj(current.paths)[path]))) continue; // a removed operation: oasdiff reports it
      const own = openapiRequirements(now.security);
      const ownBefore = openapiRequirements(obj(obj(item)[method]).security);
      const before = ownBefore ?? openapiRequirements(released.security) ?? [];
      const after = own ?? openapiRequirements(current.security) ?? [];
      for (const r of refusedAlternatives(before, after, (n) => changed.get(n)?.length === 0)) {
        const redefined = Object.keys(r).filter((n) => changed.get(n)?.length);
        findings.push({
          kind: 'openapi',
          group: 'security',
          location: `${method.toUpperCase()} ${path}`,
          message: `a client authenticating with ${describe(r)} is refused: it now needs ${after.length ? after.map(describe).join(' or ') : 'no credentials'}${redefined.length ? ` (${redefined.map((n) => `${n} redefined: ${changed.get(n)?.join(', ')}`).join('; ')})` : ''}`,
          rule: 'security-tightened',
          ...(redefined.length
            ? { cause: `security scheme \`${redefined[0]}\` redefined`, contract: 'contracts/openapi.yaml', pointer: `/components/securitySchemes/${redefined[0]}` }
            : own || ownBefore
              ? // Its own requirement changed, or was removed (the document's now applies, `security: []` dropped say).
                {
                  cause: `security of ${method.toUpperCase()} ${path} ${own ? 'tightened' : 'removed: the document-wide requirement applies'}`,
                  contract: 'contracts/openapi.yaml',
                  pointer: `/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}${own ? '/security' : ''}`,
                }
              : { cause: 'the document-wide security tightened', contract: 'contracts/openapi.yaml', pointer: '/security' }),
        });
      }
    }
  }
  return findings;
}

/**
 * An AsyncAPI 3 `security` list (each entry one scheme, by `$ref` into `schemes` or inline)
 * as requirements; the scopes an operation needs are its scheme object's `scopes`.
 */
function asyncapiRequirements(v: unknown, schemes: Doc): Requirement[] {
  return list(v).map((entry) => {
    const ref = obj(entry).$ref;
    const name = typeof ref === 'string' ? (ref.split('/').pop() ?? ref) : JSON.stringify(entry);
    const scheme = typeof ref === 'string' ? obj(schemes[name]) : obj(entry);
    return { [name]: list(scheme.scopes).map(String) };
  });
}

/** AsyncAPI: every released operation still in the contract (its security lists alternatives). */
export function checkAsyncApiSecurity(released: Doc, current: Doc, kind: Kind = 'asyncapi'): Finding[] {
  const schemesOf = (d: Doc) => obj(obj(d.components).securitySchemes);
  const [oldSchemes, newSchemes] = [schemesOf(released), schemesOf(current)];
  const changed = (n: string) => schemeChanges(n in oldSchemes ? obj(oldSchemes[n]) : undefined, n in newSchemes ? obj(newSchemes[n]) : undefined);
  const findings: Finding[] = [];
  for (const [id, op] of Object.entries(obj(released.operations))) {
    if (!(id in obj(current.operations))) continue; // a removed operation: @asyncapi/diff reports it
    const before = asyncapiRequirements(obj(op).security, oldSchemes);
    const after = asyncapiRequirements(obj(obj(current.operations)[id]).security, newSchemes);
    for (const r of refusedAlternatives(before, after, (n) => changed(n).length === 0)) {
      const redefined = Object.keys(r).filter((n) => changed(n).length);
      findings.push({
        kind,
        group: 'security',
        location: `operation ${id}`,
        message: `a client authenticating with ${describe(r)} is refused: it now needs ${after.length ? after.map(describe).join(' or ') : 'no credentials'}${redefined.length ? ` (${redefined.map((n) => `${n} redefined: ${changed(n).join(', ')}`).join('; ')})` : ''}`,
        rule: 'security-tightened',
        ...(redefined.length
          ? { cause: `security scheme \`${redefined[0]}\` redefined`, contract: 'contracts/asyncapi.yaml', pointer: `/components/securitySchemes/${redefined[0]}` }
          : { cause: `security of operation ${id} tightened`, contract: 'contracts/asyncapi.yaml', pointer: `/operations/${id}/security` }),
      });
    }
  }
  return findings;
}
