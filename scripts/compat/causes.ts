/**
 * The cause of a finding: the one node of a contract whose change it reports.
 *
 * Removing one property of a shared schema breaks every operation and media type that
 * returns it, and every message whose payload references it: oasdiff says so once per
 * operation and media type, the payload view once per message. A reviewer wants the
 * one change ("`OrderV2.note` removed") with what it breaks listed under it, so each
 * finding is tied to a node (file + JSON pointer) and the report groups by it.
 *
 * - oasdiff names the node itself: `baseSource` is the line of the released file where
 *   the changed node starts, mapped back to its pointer here.
 * - A message payload is compared through a dereferenced view, so its node is found by
 *   walking the released AsyncAPI document along the property path oasdiff printed,
 *   following `$ref`s (into openapi.yaml too).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';

/** A node of a contract file: which file (absolute) and where in it (JSON pointer). */
export interface NodeRef {
  file: string;
  pointer: string;
}

interface Parsed {
  doc: Document;
  lines: LineCounter;
  json: unknown;
}

const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const unescape = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');
export const pointerOf = (segments: readonly string[]) => segments.map((s) => `/${escape(s)}`).join('');
export const segmentsOf = (pointer: string) => (pointer === '' ? [] : pointer.slice(1).split('/').map(unescape));

/** Parses contract files once per gate run (they are read again by line and by pointer). */
export class ContractFiles {
  private readonly cache = new Map<string, Parsed | undefined>();

  private read(file: string): Parsed | undefined {
    if (!this.cache.has(file)) {
      let parsed: Parsed | undefined;
      try {
        const lines = new LineCounter();
        const doc = parseDocument(readFileSync(file, 'utf8'), { lineCounter: lines });
        parsed = { doc, lines, json: doc.toJS({ maxAliasCount: -1 }) as unknown };
      } catch {
        parsed = undefined; // an unreadable file was reported by its own check; no cause then
      }
      this.cache.set(file, parsed);
    }
    return this.cache.get(file);
  }

  /** The pointer of the deepest map entry whose key starts on `line` (1-based). */
  pointerAtLine(file: string, line: number): string | undefined {
    const parsed = this.read(file);
    if (!parsed) return undefined;
    let found: string[] | undefined;
    const visit = (node: unknown, path: string[]): void => {
      if (isMap(node)) {
        for (const pair of node.items) {
          const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
          if (key === undefined) continue;
          const range = (pair.key as Node).range;
          const at = range ? parsed.lines.linePos(range[0]).line : -1;
          if (at === line) found = [...path, key];
          visit(pair.value, [...path, key]);
        }
      } else if (isSeq(node)) node.items.forEach((item, i) => visit(item, [...path, String(i)]));
    };
    visit(parsed.doc.contents, []);
    return found && pointerOf(found);
  }

  /** The 1-based line of the deepest existing prefix of `pointer` in `file` (a removed node: its parent). */
  lineOf(file: string, pointer: string): number | undefined {
    const parsed = this.read(file);
    if (!parsed) return undefined;
    let node: unknown = parsed.doc.contents;
    let line: number | undefined = 1;
    for (const seg of segmentsOf(pointer)) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === seg);
        if (!pair) break;
        const range = (pair.key as Node).range;
        if (range) line = parsed.lines.linePos(range[0]).line;
        node = pair.value;
      } else if (isSeq(node) && /^\d+$/.test(seg) && Number(seg) < node.items.length) {
        node = node.items[Number(seg)];
        const range = (node as Node | null)?.range;
        if (range) line = parsed.lines.linePos(range[0]).line;
      } else break;
    }
    return line;
  }

  /** The value at `pointer` in `file`'s parsed JSON. */
  private at(file: string, pointer: string): unknown {
    let value: unknown = this.read(file)?.json;
    for (const seg of segmentsOf(pointer)) value = value && typeof value === 'object' ? (value as Record<string, unknown>)[seg] : undefined;
    return value;
  }

  /** Follows `$ref`s (`#/...` in the same file, `./other.yaml#/...` beside it) from a node to the node they name. */
  private deref(ref: NodeRef): NodeRef {
    for (let hops = 0; hops < 32; hops++) {
      const value = this.at(ref.file, ref.pointer) as { $ref?: unknown } | undefined;
      if (!value || typeof value.$ref !== 'string') return ref;
      const [path, fragment = ''] = value.$ref.split('#');
      ref = { file: path ? resolve(dirname(ref.file), path) : ref.file, pointer: fragment };
    }
    return ref;
  }

  /** Whether the node is a `$ref` (it names another node rather than being one). */
  private refersOn(ref: NodeRef): boolean {
    return typeof (this.at(ref.file, ref.pointer) as { $ref?: unknown } | undefined)?.$ref === 'string';
  }

  /**
   * How the `$ref` at `ref` was edited in `other` (the current file, same pointer): "now refers
   * to `X`", "no longer refers to `Y`" (a schema of its own in its place); undefined when it
   * was no `$ref`, is the same one, or the node is gone (that removal is reported as such).
   */
  refEdit(ref: NodeRef, other: string): string | undefined {
    const was = (this.at(ref.file, ref.pointer) as { $ref?: unknown } | undefined)?.$ref;
    const now = this.at(other, ref.pointer) as { $ref?: unknown } | undefined;
    if (typeof was !== 'string' || now === undefined || now.$ref === was) return undefined;
    return typeof now.$ref === 'string' ? `now refers to \`${now.$ref}\`` : `no longer refers to \`${was}\``;
  }

  /** The node `segments` below `start`, following each `$ref` on the way (`responses/400` into `components/responses/E400`). */
  descend(start: NodeRef, segments: readonly string[]): NodeRef {
    let ref = start;
    for (const seg of segments) {
      ref = this.deref(ref);
      ref = { file: ref.file, pointer: `${ref.pointer}/${escape(seg)}` };
    }
    return ref;
  }

  /** The member `key` of the node at `ref` (after its `$ref`s). */
  valueAt(ref: NodeRef, key: string): unknown {
    const target = this.deref(ref);
    return this.at(target.file, `${target.pointer}/${escape(key)}`);
  }

  /** The node a `$ref` chain at `ref` ends on (`ref` itself when it is no `$ref`). */
  target(ref: NodeRef): NodeRef {
    return this.deref(ref);
  }

  /** Whether the node at `ref` differs from the node at the same pointer of `other` (the current file it was released as), or is gone there. */
  changed(ref: NodeRef, other: string): boolean {
    return JSON.stringify(this.at(ref.file, ref.pointer)) !== JSON.stringify(this.at(other, ref.pointer));
  }

  /**
   * As `walk`, but where oasdiff's path names a property without the branch that declares it
   * (`created_at` under a `oneOf` of OrderV1 and OrderV2), every branch that declares it: the
   * caller picks the one that changed.
   */
  walkAll(start: NodeRef, propertyPath: string): NodeRef[] {
    const segments = propertyPath.match(/(?:[^/[]|\[[^\]]*\])+/g) ?? [];
    const out: NodeRef[] = [];
    const step = (declared: NodeRef, i: number, hops: number): void => {
      if (i === segments.length) {
        out.push(declared);
        return;
      }
      const ref = this.deref(declared);
      const seg = segments[i];
      const branch = /^(?:anyOf|oneOf|allOf)\[(.*)\]$/.exec(seg);
      if (branch) {
        if (branch[1].startsWith('#')) step(this.deref({ file: ref.file, pointer: branch[1].slice(1) }), i + 1, hops);
        return;
      }
      const next = seg === 'items' && this.at(ref.file, `${ref.pointer}/items`) !== undefined ? `${ref.pointer}/items` : `${ref.pointer}/properties/${escape(seg)}`;
      if (this.at(ref.file, next) !== undefined) return step({ file: ref.file, pointer: next }, i + 1, hops);
      if (hops >= 8) return;
      for (const keyword of ['oneOf', 'anyOf', 'allOf']) {
        const list = this.at(ref.file, `${ref.pointer}/${keyword}`);
        if (Array.isArray(list)) list.forEach((_, k) => step({ file: ref.file, pointer: `${ref.pointer}/${keyword}/${k}` }, i, hops + 1));
      }
    };
    step(start, 0, 0);
    return out;
  }

  /** The member names of the map at `ref` (after its `$ref`s), in order, or a list's indices; none for anything else. */
  keysOf(ref: NodeRef): string[] {
    const target = this.deref(ref);
    const value = this.at(target.file, target.pointer);
    return value && typeof value === 'object' ? Object.keys(value) : [];
  }

  /**
   * Walks a property path as oasdiff prints it (`orders/items/note`,
   * `oneOf[#/components/schemas/OrderV2]/note`) from `start`, through `$ref`s: the node of
   * the last property, where the schema that owns it declares it.
   */
  walk(start: NodeRef, propertyPath: string, refs: NodeRef[] = []): NodeRef | undefined {
    if (this.refersOn(start)) refs.push(start);
    let ref = this.deref(start);
    let declared = ref;
    // Split on the slashes between properties, not those inside a branch's `[#/components/...]`.
    for (const seg of propertyPath.match(/(?:[^/[]|\[[^\]]*\])+/g) ?? []) {
      const branch = /^(?:anyOf|oneOf|allOf)\[(.*)\]$/.exec(seg);
      if (branch) {
        if (!branch[1].startsWith('#')) return undefined;
        declared = ref = this.deref({ file: ref.file, pointer: branch[1].slice(1) });
        continue;
      }
      const next = seg === 'items' && this.at(ref.file, `${ref.pointer}/items`) !== undefined ? `${ref.pointer}/items` : `${ref.pointer}/properties/${escape(seg)}`;
      if (this.at(ref.file, next) === undefined) return undefined;
      // The last property is named where its schema declares it, not where its $ref points.
      declared = { file: ref.file, pointer: next };
      if (this.refersOn(declared)) refs.push(declared);
      ref = this.deref(declared);
    }
    return declared;
  }
}

/**
 * The property path an oasdiff sentence names, whichever way it says it: "the response property
 * `x`", "removed the required property `x` from the response", "the `x` response's property",
 * "the `x` response property's maxLength", "added ... to the `x` response property".
 */
export function propertyPathIn(text: string | undefined): string | undefined {
  return /\bproperty `([^`]+)`/.exec(text ?? '')?.[1] ?? /the `([^`]+)` (?:(?:response|request)(?:'s)? )?property/.exec(text ?? '')?.[1];
}

/** `#/components/schemas/OrderV2/properties/note` -> `OrderV2.note`; other pointers as they are. */
export function nodeLabel(pointer: string): string {
  const segs = segmentsOf(pointer);
  const i = segs[0] === 'components' ? 2 : -1;
  if (i < 0 || segs.length <= i) return `#${pointer}`;
  const parts = [segs[i]];
  for (let j = i + 1; j < segs.length; j++) {
    if (segs[j] === 'properties' && j + 1 < segs.length) parts.push(segs[++j]);
    else if (segs[j] === 'items') parts.push('[]');
    else parts.push(segs[j]);
  }
  return parts.join('.').replace(/\.\[\]/g, '[]');
}

/** What a rule id says happened to its node: `response-required-property-removed` -> `removed`. */
export function verbOf(ruleId: string | undefined): string {
  if (!ruleId) return 'changed';
  const rule = ruleId.toLowerCase().replace(/_/g, '-');
  // A value dropped from an enum or a code list: the node stays, it lost values.
  if (/enum-value-removed/.test(rule)) return 'lost enum values';
  if (/(one|any)-of-removed/.test(rule)) return 'lost a branch';
  if (/(one|any)-of-added/.test(rule)) return 'gained a branch';
  // An attribute of the node removed, not the node: the interface a type implements, a directive's location, a const.
  if (/interface-removed/.test(rule)) return 'lost an interface';
  if (/location-removed/.test(rule)) return 'lost a location';
  if (/const-removed/.test(rule)) return 'lost its const';
  // The gate's own rules (oasdiff.ts): what they say happened.
  if (/-narrowed$/.test(rule)) return 'narrowed';
  if (/range-unset/.test(rule)) return 'widened';
  if (/default-changed/.test(rule)) return 'default changed';
  if (/removed|deleted/.test(rule)) return 'removed';
  if (/type-changed|type-generalized|type-specialized/.test(rule)) return 'retyped';
  if (/became-optional|became-nullable/.test(rule)) return rule.includes('nullable') ? 'made nullable' : 'made optional';
  if (/became-not-nullable/.test(rule)) return 'made non-nullable';
  if (/became-required|added-required|^new-required/.test(rule)) return 'made required';
  if (/enum-value-added|added/.test(rule)) return 'extended';
  return rule;
}

/** The cause of a finding located at `node`: its label and the contract file relative to `contractsDir`'s parent. */
export function causeAt(node: NodeRef, rule: string | undefined, contractsDir: string): { cause: string; contract: string; pointer: string } {
  // A branch added to or dropped from a oneOf/anyOf changes the schema that lists it: oasdiff's
  // line is inside the branch (`- type: "null"`), the node is the value whose branches they are.
  const branches = rule && /(one|any)-of-(removed|added)/.test(rule) ? /^(.*?)\/(?:oneOf|anyOf)(?:\/|$)/.exec(node.pointer) : null;
  if (branches) node = { file: node.file, pointer: branches[1] };
  // oasdiff's line may be a keyword of the schema that changed (`type:`, `maxLength:`): the schema is the node.
  const keyword =
    /^(.*)\/(?:type|format|enum|const|pattern|minLength|maxLength|minimum|maximum|exclusiveMinimum|exclusiveMaximum|multipleOf|minItems|maxItems|uniqueItems|minProperties|maxProperties|default|nullable)$/.exec(
      node.pointer,
    );
  if (keyword && !/\/properties$/.test(keyword[1])) node = { file: node.file, pointer: keyword[1] };
  // Released files are named as the current file they stand for: a reviewer edits that one.
  const rel = relative(join(contractsDir, '..'), node.file).replace(/(^|\/)released\//, '$1');
  return { cause: `\`${nodeLabel(node.pointer)}\` ${verbOf(rule)}`, contract: rel, pointer: node.pointer };
}
