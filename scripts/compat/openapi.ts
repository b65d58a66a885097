/**
 * OpenAPI check: contracts/openapi.yaml against the released one, by oasdiff.
 *
 * The rule: "each live REST version's response schema is checked against its last
 * release, and a removed field fails the check". One oasdiff run covers every version
 * (the /v1 and /v2 paths and the negotiated /orders paths, whose media types carry
 * `version=<n>`); the findings are then grouped per REST version so the report says
 * which released clients break.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { causeAt, ContractFiles, nodeLabel, propertyPathIn, type NodeRef } from './causes';
import { parse } from 'yaml';
import { oasdiffBreaking, type OasdiffChange } from './oasdiff';
import { checkOpenApiSecurity } from './security';
import { checkOperationSunsets, checkVersions } from './versions';
import { checkRequestMediaTypes } from './requestMediaTypes';
import { checkExtensibleEnums } from './extensibleEnums';
import { asRecord, type Finding, type KindResult } from './types';

/**
 * The REST version a change belongs to: the `/v<n>/` path prefix, else the vendor media
 * type's `version=<n>`, else the `OrderV<n>` / `OrderListV<n>` branch of a negotiated
 * `oneOf`; undefined when it concerns every version (or none, like /healthz).
 */
export function restVersion(change: Pick<OasdiffChange, 'path' | 'text'>): string | undefined {
  const byPath = /^\/v(\d+)\//.exec(change.path ?? '');
  if (byPath) return `v${byPath[1]}`;
  const byMediaType = /version=(\d+)/.exec(change.text ?? '');
  if (byMediaType) return `v${byMediaType[1]}`;
  const byBranch = /schemas\/Order(?:List)?V(\d+)\]/.exec(change.text ?? '');
  if (byBranch) return `v${byBranch[1]}`;
  return undefined;
}

/** `GET /v2/orders/{orderId}` from oasdiff's operation and path. */
function location(change: OasdiffChange): string {
  return [change.operation, change.path].filter(Boolean).join(' ') || change.section || 'document';
}

/**
 * The live REST versions and the operation count, for the summary line: a scan of the
 * `paths:` block's keys, not a YAML parse (parsing this 1,800-line file costs more
 * than the oasdiff run), so it assumes the block style our contract is written in.
 */
export function inventory(text: string): { operations: number; versions: string[] } {
  const block = /^paths:\n([\s\S]*?)^\S/m.exec(`${text}\n.`)?.[1] ?? '';
  const operations = (block.match(/^ {4}(get|put|post|delete|options|head|patch|trace):/gm) ?? []).length;
  const paths = (block.match(/^ {2}["']?\/[^:\n]*:/gm) ?? []).map((l) => l.trim().replace(/^["']/, ''));
  const versions = [...new Set(paths.map((p) => /^\/v(\d+)\//.exec(p)?.[1]).filter((v): v is string => !!v))].sort((a, b) => Number(a) - Number(b)).map((v) => `v${v}`);
  return { operations, versions };
}

/**
 * The property a change names, where oasdiff gives no line for it (a property made optional,
 * whose node is a `required` list entry): walked from the operation's response or request
 * schema in the released file along the path oasdiff printed, through `$ref`s, to where
 * its schema declares it. So "`note` became optional" on 24 operations and media types is
 * one change, `OrderV2.note` made optional.
 */
export function propertyNode(c: OasdiffChange, releasedFile: string, files: ContractFiles, currentFile?: string): NodeRef | undefined {
  if (!c.path || !c.operation) return undefined;
  const operation = { file: releasedFile, pointer: `/paths/${c.path.replace(/~/g, '~0').replace(/\//g, '~1')}/${c.operation.toLowerCase()}` };
  const text = c.text ?? '';
  const status = /status `(\w+)`/.exec(text)?.[1] ?? /the `(\w+)` status/.exec(text)?.[1];
  const candidates: NodeRef[] = [];
  // A response header (its schema, format, enum): the header, where the contract defines it (a shared component).
  const header = /\bresponse header `([^`]+)`/i.exec(text)?.[1];
  const path = propertyPathIn(text);
  const property = path === undefined ? undefined : ([/\brequest\b/.test(text) && !/\bresponse\b/.test(text) ? 'request' : 'response', path] as const);
  const parameter = /\bthe (path|query|header) parameter `([^`]+)`/.exec(text);
  if (parameter) {
    const pathItem = { file: releasedFile, pointer: operation.pointer.replace(/\/[^/]+$/, '') };
    for (const list of [files.descend(operation, ['parameters']), files.descend(pathItem, ['parameters'])]) {
      for (const k of files.keysOf(list)) {
        const p = files.target(files.descend(list, [k]));
        if (files.valueAt(p, 'in') === parameter[1] && String(files.valueAt(p, 'name')).toLowerCase() === parameter[2].toLowerCase()) candidates.push(p);
      }
    }
  } else if (/\bthe request body\b/.test(text)) {
    // The body's own schema (`maxProperties` on it): where the media type's schema points.
    const content = files.descend(operation, ['requestBody', 'content']);
    const named = /\(media type: ([^)]+)\)/.exec(text)?.[1];
    for (const mediaType of named !== undefined ? [named] : files.keysOf(content)) {
      const schema = files.target(files.descend(content, [mediaType, 'schema']));
      // A negotiated body (anyOf of the versions' schemas): each branch.
      const branches = ['anyOf', 'oneOf'].flatMap((k) => files.keysOf(files.descend(schema, [k])).map((i) => files.target(files.descend(schema, [k, i]))));
      candidates.push(...(branches.length > 0 ? branches : [schema]));
    }
  } else if (header && status) {
    const headers = files.descend(operation, ['responses', status, 'headers']);
    const name = files.keysOf(headers).find((k) => k.toLowerCase() === header.toLowerCase());
    if (name !== undefined) candidates.push(files.target(files.descend(headers, [name])));
  } else if (property) {
    const body = property[0] === 'response' ? (status ? files.descend(operation, ['responses', status]) : undefined) : files.descend(operation, ['requestBody']);
    if (!body) return undefined;
    const content = files.descend(body, ['content']);
    const named = /\(media type: ([^)]+)\)/.exec(text)?.[1];
    for (const mediaType of named !== undefined ? [named] : files.keysOf(content)) candidates.push(...files.walkAll(files.descend(content, [mediaType, 'schema']), property[1]));
  }
  // Of several (a property every branch declares), the one that changed.
  return (currentFile !== undefined ? candidates.find((n) => files.changed(n, currentFile)) : undefined) ?? candidates[0];
}

export async function checkOpenApi(current: string, released: string, files = new ContractFiles()): Promise<KindResult> {
  const revision = join(current, 'openapi.yaml');
  const base = join(released, 'openapi.yaml');
  const text = readFileSync(revision, 'utf8');
  const { operations, versions } = inventory(text);
  const scope = `${operations} operations; responses of REST ${versions.join(', ')}`;
  // Byte-identical files cannot differ: skip the oasdiff run.
  if (text === readFileSync(base, 'utf8')) {
    return { kind: 'openapi', findings: [], checked: `${scope} unchanged since the release`, notes: [] };
  }
  const findings: Finding[] = (await oasdiffBreaking(base, revision)).map((c) => {
    const version = restVersion(c);
    // The changed node, as oasdiff located it in the released file (or in the current one, for an addition).
    const at = c.baseSource ?? c.revisionSource;
    const pointer = at && files.pointerAtLine(at.file, at.line);
    // oasdiff's line may name a node that did not change (a removed property's `$ref` target):
    // the property it names in the text, if that is what changed, is the cause.
    const located = at && pointer !== undefined ? { file: at.file, pointer } : undefined;
    const currentOf = (file: string) => join(current, relative(released, file));
    const named = located && files.changed(located, currentOf(located.file)) ? undefined : propertyNode(c, base, files, revision);
    const node = located && (!named || !files.changed(named, currentOf(named.file))) ? located : (named ?? located);
    // A property's `$ref` replaced (by another, or by a schema of its own): that one edit is the
    // cause of every line it brings (a maxLength unset, values added), not each of them.
    const held = named ?? propertyNode(c, base, files, revision);
    const edit = held && files.refEdit(held, currentOf(held.file));
    return {
      ...(held && edit ? { ...causeAt(held, undefined, current), cause: `\`${nodeLabel(held.pointer)}\` ${edit}` } : node ? causeAt(node, c.id, current) : { contract: 'contracts/openapi.yaml' }),
      kind: 'openapi',
      group: version ? `REST ${version}` : 'every REST version',
      location: location(c),
      message: c.text ?? c.id ?? 'breaking change',
      rule: c.id,
    };
  });
  // oasdiff rates security changes INFO (and misses some): security.ts judges them.
  const [releasedDoc, currentDoc] = [asRecord(parse(readFileSync(base, 'utf8'))), asRecord(parse(text))];
  findings.push(...checkOpenApiSecurity(releasedDoc, currentDoc));
  // info.x-api-versions, which oasdiff does not read: versions.ts.
  findings.push(...checkVersions(releasedDoc, currentDoc));
  // An operation's x-sunset, which oasdiff reads only to let a path go after it: versions.ts.
  findings.push(...checkOperationSunsets(releasedDoc, currentDoc));
  // A renamed request media type, on which oasdiff fires no rule: requestMediaTypes.ts.
  const removed = new Set(findings.filter((f) => f.rule === 'request-body-media-type-removed').map((f) => `${f.location}\n${/`([^`]+)`/.exec(f.message)?.[1] ?? ''}`));
  findings.push(...checkRequestMediaTypes(releasedDoc, currentDoc, (location, type) => removed.has(`${location}\n${type}`)));
  // A value dropped from a published code list (Problem.code), which oasdiff judges on requests only: extensibleEnums.ts.
  const enumRemovals = findings.filter((f) => f.rule?.endsWith('x-extensible-enum-value-removed')).map((f) => f.message);
  findings.push(...checkExtensibleEnums(releasedDoc, currentDoc, (value) => enumRemovals.some((m) => m.includes(`value \`${value}\``))));
  return { kind: 'openapi', findings, checked: `${scope} checked against the release`, notes: [] };
}
