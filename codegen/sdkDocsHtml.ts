/**
 * The SDK's API reference as one HTML page (generated/docs/sdk.html, served at /docs/sdk),
 * rendered from TypeDoc's JSON model of the SDK (codegen/sdkDocs.ts builds the model).
 *
 * Why a renderer of our own: TypeDoc's HTML theme (what `npm run docs:sdk` writes into
 * sdk/docs/api/) is a multi-file site, with its own scripts, stylesheet and search index;
 * the reference pages are one file each, served like the others, with nothing loaded from
 * anywhere else. This renders the same model as one page: per entry point its exported
 * functions (signatures with parameter and return types), classes, interfaces (members
 * with types and comments), type aliases and variables, doc comments rendered from
 * markdown (markdown-it, raw HTML off), an anchor per symbol and member, a table of contents.
 *
 * Deterministic: the same model gives the same bytes (no date, no path, no id of TypeDoc's
 * in the output; order by kind, then by name compared code unit by code unit, not by locale).
 * Every text of the model is escaped.
 */
import MarkdownIt from 'markdown-it';
import type { JSONOutput, NormalizedPath, ReflectionKind } from 'typedoc';

/**
 * TypeDoc's JSON model with its reflection ids and kinds as plain numbers and its paths as
 * plain strings: the renderer only matches ids, compares kinds with KIND and shows no path,
 * and a test can then write a model (TypeDoc brands ids and paths).
 * TypeDoc's model is assignable to it as it is.
 */
export type Plain<T> = T extends JSONOutput.ReflectionId | ReflectionKind ? number : T extends NormalizedPath ? string : T extends object ? { [K in keyof T]: Plain<T[K]> } : T;

export type SdkModel = Plain<JSONOutput.ProjectReflection>;
type Child = Plain<JSONOutput.DeclarationReflection | JSONOutput.ReferenceReflection>;
type Decl = Plain<JSONOutput.DeclarationReflection>;
type Signature = Plain<JSONOutput.SignatureReflection>;
type Param = Plain<JSONOutput.ParameterReflection>;
type TypeParam = Plain<JSONOutput.TypeParameterReflection>;
type SomeType = Plain<JSONOutput.SomeType>;
type Comment = Plain<JSONOutput.Comment>;
type Part = Plain<JSONOutput.CommentDisplayPart>;

/** TypeDoc's ReflectionKind values used here (JSON schema 2.0; codegen/sdkDocs.ts checks them against TypeDoc's enum). */
export const KIND = {
  Module: 2,
  Namespace: 4,
  Enum: 8,
  EnumMember: 16,
  Variable: 32,
  Function: 64,
  Class: 128,
  Interface: 256,
  Constructor: 512,
  Property: 1024,
  Method: 2048,
  ConstructorSignature: 16384,
  Accessor: 262144,
  TypeAlias: 2097152,
} as const;

/** The model's format this renderer reads. */
export const SCHEMA_VERSION = '2.0';

/** The sections of an entry point, in this order. */
const SYMBOL_GROUPS: readonly { title: string; kinds: readonly number[] }[] = [
  { title: 'Functions', kinds: [KIND.Function] },
  { title: 'Classes', kinds: [KIND.Class] },
  { title: 'Interfaces', kinds: [KIND.Interface] },
  { title: 'Type aliases', kinds: [KIND.TypeAlias] },
  { title: 'Variables', kinds: [KIND.Variable] },
  { title: 'Enumerations', kinds: [KIND.Enum] },
  { title: 'Namespaces', kinds: [KIND.Namespace, KIND.Module] },
];

/** Members of a class, interface or object type, in this order (anything else last). */
const MEMBER_ORDER: readonly number[] = [KIND.Constructor, KIND.Property, KIND.Accessor, KIND.Method, KIND.EnumMember];

/** The other pages of the reference: the same navigation as codegen/docs/page.hbs, with this page current. */
const NAV = `<nav class="orderline-nav" aria-label="orderline API reference">
  <strong>orderline API reference</strong>
  <a href="/docs">REST</a>
  <a href="/docs/realtime">Realtime (SSE, WebSocket)</a>
  <a href="/docs/graphql">GraphQL</a>
  <a href="/docs/sdk" aria-current="page">SDK</a>
  <span class="contracts">Contracts: <a href="/openapi.yaml">openapi.yaml</a> (<a href="/openapi.json">json</a>) · <a href="/asyncapi.yaml">asyncapi.yaml</a> · <a href="/schema.graphql">schema.graphql</a></span>
</nav>`;

const STYLE = `
  body { margin: 0; font: 15px/1.55 system-ui, sans-serif; color: #1d1d1f; background: #fff; }
  .orderline-nav { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; align-items: center; padding: .5rem 1rem; font: 14px/1.5 system-ui, sans-serif; border-bottom: 1px solid #ddd; }
  .orderline-nav a { color: inherit; }
  .orderline-nav a[aria-current="page"] { font-weight: 700; text-decoration: none; }
  .orderline-nav .contracts { margin-left: auto; }
  .layout { display: flex; align-items: flex-start; }
  .toc { position: sticky; top: 0; flex: 0 0 17rem; max-height: 100vh; overflow: auto; box-sizing: border-box; padding: 1rem; border-right: 1px solid #eee; font-size: 14px; }
  .toc ul { list-style: none; margin: 0; padding-left: .75rem; }
  .toc > ul { padding-left: 0; }
  .toc .group { color: #666; margin-top: .35rem; }
  main { flex: 1; min-width: 0; max-width: 62rem; padding: 1rem 2rem 4rem; }
  @media (max-width: 50rem) { .layout { display: block; } .toc { position: static; max-height: none; border-right: 0; border-bottom: 1px solid #eee; } main { padding: 1rem; } }
  a { color: #0b5cad; }
  h1 { font-size: 1.8rem; margin: .5rem 0; }
  h2.module { font-size: 1.5rem; margin: 3rem 0 .5rem; padding-top: .5rem; border-top: 2px solid #ddd; }
  h3 { font-size: 1.2rem; margin: 2rem 0 .5rem; color: #444; }
  .symbol { margin: 1.25rem 0 2rem; }
  .symbol > h4 { font-size: 1.1rem; margin: 0 0 .4rem; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
  .kind { font: 600 .75rem system-ui, sans-serif; text-transform: uppercase; letter-spacing: .04em; color: #666; margin-right: .4rem; }
  code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
  pre { background: #f6f8fa; border: 1px solid #e6e8eb; border-radius: 4px; padding: .5rem .75rem; white-space: pre-wrap; overflow-wrap: anywhere; }
  pre.signature { background: #f3f6fb; }
  :not(pre) > code { background: #f3f4f6; border-radius: 3px; padding: 0 .2em; }
  dl.members { margin: .5rem 0; }
  dl.members > dt { margin-top: .6rem; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; overflow-wrap: anywhere; }
  dl.members > dd { margin: .15rem 0 0 1.25rem; }
  dl.members dl.members { border-left: 2px solid #eee; padding-left: .75rem; }
  .note { color: #666; font-size: .9em; }
  .tag-label { font-weight: 600; margin-bottom: .1rem; }
  .deprecated { color: #a40000; }
  a.anchor { color: inherit; text-decoration: none; }
  :target { scroll-margin-top: .5rem; }
  :target > h4, dt:target { background: #fff8c5; }
`;

/** The longest object type written on one line (characters shown); longer ones list their members. */
const INLINE_MAX = 100;

/** Characters a reader sees of rendered HTML (tags dropped, each entity one character). */
const visibleLength = (html: string) => html.replace(/<[^>]*>/g, '').replace(/&[^;]+;/g, '_').length;

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);

/** Names compared code unit by code unit after case folding: the same order on every machine (localeCompare depends on the locale). */
const byName = (a: { name: string }, b: { name: string }) => {
  const [x, y] = [a.name.toLowerCase(), b.name.toLowerCase()];
  if (x !== y) return x < y ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
};

/** Precedence of a type in TypeScript's syntax: a child with less than its position needs parentheses. */
function precedence(t: SomeType): number {
  switch (t.type) {
    case 'conditional':
      return 0;
    case 'reflection':
      return t.declaration.signatures?.length && !t.declaration.children?.length && !t.declaration.indexSignatures?.length ? 0 : 5;
    case 'union':
      return 1;
    case 'intersection':
      return 2;
    case 'typeOperator':
    case 'predicate':
    case 'inferred':
      return 3;
    case 'array':
    case 'indexedAccess':
    case 'optional':
    case 'rest':
      return 4;
    default:
      return 5;
  }
}

/**
 * `entryOrder`: the entry points' names in the order they are shown (sdk/typedoc.json's), any other after them;
 * without it, the model's order.
 */
export function renderSdkReference(project: SdkModel, { entryOrder = [] }: { entryOrder?: readonly string[] } = {}): string {
  if (project.schemaVersion !== SCHEMA_VERSION) throw new Error(`sdk docs: TypeDoc's model is schema ${project.schemaVersion}, this renderer reads ${SCHEMA_VERSION}`);
  const md = new MarkdownIt('default', { html: false, linkify: false, typographer: false });
  const entryRank = (m: Decl) => (entryOrder.includes(m.name) ? entryOrder.indexOf(m.name) : entryOrder.length);
  const modules = (project.children ?? []).filter((m) => m.kind === KIND.Module).sort((a, b) => entryRank(a) - entryRank(b));
  if (modules.length === 0) throw new Error('sdk docs: the model has no entry point');

  // The declaration each export stands for (a re-export is a reference to it), and where it is described:
  // the entry point that exports it with the fewest exports, i.e. the most specific one (`/rest` rather than the
  // package's index, which re-exports everything); the others link there.
  const declarations = new Map<number, Decl>();
  const exportedBy = new Map<number, Decl[]>();
  const targetOf = (c: Child) => ('target' in c ? c.target : c.id);
  for (const m of modules) {
    for (const c of m.children ?? []) {
      if (!('target' in c)) declarations.set(c.id, c);
      const id = targetOf(c);
      exportedBy.set(id, [...(exportedBy.get(id) ?? []), m]);
    }
  }
  const exportCount = (m: Decl) => m.children?.length ?? 0;
  const holds = (m: Decl, id: number) => (m.children ?? []).some((c) => c.id === id && !('target' in c));
  const home = new Map<number, Decl>();
  for (const [id, ms] of exportedBy) {
    if (!declarations.has(id)) continue; // a re-export of something outside the documentation
    // Ties go to the entry point TypeDoc gave the declaration to (the others hold references to it).
    const better = (m: Decl, best: Decl) => exportCount(m) < exportCount(best) || (exportCount(m) === exportCount(best) && holds(m, id) && !holds(best, id));
    home.set(
      id,
      ms.reduce((best, m) => (better(m, best) ? m : best)),
    );
  }

  // Anchors: `module-<slug>` per entry point, the symbol's name per symbol, `Symbol.member` per member.
  const anchors = new Map<number, string>();
  const taken = new Set<string>();
  const claim = (want: string) => {
    const base = want.replace(/[^A-Za-z0-9_$.@-]+/g, '-');
    let a = base;
    for (let n = 2; taken.has(a); n++) a = `${base}-${n}`;
    taken.add(a);
    return a;
  };
  const moduleAnchor = new Map<Decl, string>();
  for (const m of modules) moduleAnchor.set(m, claim(`module-${m.name.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}`));
  const homed = (m: Decl) => [...declarations.values()].filter((d) => home.get(d.id) === m).sort(byName);
  for (const m of modules) {
    for (const d of homed(m)) {
      const a = claim(d.name);
      anchors.set(d.id, a);
      for (const member of membersOf(d)) anchors.set(member.id, claim(`${a}.${member.name}`));
    }
  }
  const href = (a: string) => `#${encodeURI(a)}`;

  /** Members of a declaration (or of the object type a type alias names), without what comes from outside the package (Error's, Object's). */
  function membersOf(d: Decl): Decl[] {
    const children = d.kind === KIND.TypeAlias && d.type?.type === 'reflection' ? (d.type.declaration.children ?? []) : (d.children ?? []);
    const rank = (k: number) => (MEMBER_ORDER.includes(k) ? MEMBER_ORDER.indexOf(k) : MEMBER_ORDER.length);
    return children.filter((c) => !c.flags.isExternal).sort((a, b) => Number(!!a.flags.isStatic) - Number(!!b.flags.isStatic) || rank(a.kind) - rank(b.kind) || byName(a, b));
  }

  // ---- types ----------------------------------------------------------------------------

  const wrap = (t: SomeType, min: number) => (precedence(t) < min ? `(${type(t)})` : type(t));
  const typeArgs = (args: SomeType[] | undefined) => (args?.length ? `&lt;${args.map((a) => type(a)).join(', ')}&gt;` : '');
  const propertyKey = (name: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? escapeHtml(name) : escapeHtml(JSON.stringify(name)));

  function literal(v: Plain<JSONOutput.LiteralType>['value']): string {
    if (v === null) return 'null';
    if (typeof v === 'string') return escapeHtml(JSON.stringify(v));
    if (typeof v === 'object') return `${v.negative ? '-' : ''}${escapeHtml(v.value)}n`;
    return escapeHtml(String(v));
  }

  function type(t: SomeType | undefined): string {
    if (t === undefined) return 'unknown';
    switch (t.type) {
      case 'intrinsic':
      case 'unknown':
        return escapeHtml(t.name);
      case 'literal':
        return literal(t.value);
      case 'reference': {
        const a = typeof t.target === 'number' && !t.refersToTypeParameter ? anchors.get(t.target) : undefined;
        const name = escapeHtml(t.name);
        return `${a ? `<a href="${escapeHtml(href(a))}">${name}</a>` : name}${typeArgs(t.typeArguments)}`;
      }
      case 'array':
        return `${wrap(t.elementType, 4)}[]`;
      case 'union':
        return t.types.map((u) => wrap(u, 2)).join(' | ');
      case 'intersection':
        return t.types.map((u) => wrap(u, 3)).join(' &amp; ');
      case 'tuple':
        return `[${(t.elements ?? []).map((e) => type(e)).join(', ')}]`;
      case 'namedTupleMember':
        return `${escapeHtml(t.name)}${t.isOptional ? '?' : ''}: ${type(t.element)}`;
      case 'optional':
        return `${wrap(t.elementType, 4)}?`;
      case 'rest':
        return `...${wrap(t.elementType, 4)}`;
      case 'typeOperator':
        return `${escapeHtml(t.operator)} ${wrap(t.target, 3)}`;
      case 'indexedAccess':
        return `${wrap(t.objectType, 4)}[${type(t.indexType)}]`;
      case 'conditional':
        return `${wrap(t.checkType, 1)} extends ${wrap(t.extendsType, 1)} ? ${type(t.trueType)} : ${type(t.falseType)}`;
      case 'mapped': {
        const ro = t.readonlyModifier === '+' ? 'readonly ' : t.readonlyModifier === '-' ? '-readonly ' : '';
        const opt = t.optionalModifier === '+' ? '?' : t.optionalModifier === '-' ? '-?' : '';
        const as = t.nameType ? ` as ${type(t.nameType)}` : '';
        return `{ ${ro}[${escapeHtml(t.parameter)} in ${type(t.parameterType)}${as}]${opt}: ${type(t.templateType)} }`;
      }
      case 'query':
        return `typeof ${type(t.queryType)}`;
      case 'predicate':
        return `${t.asserts ? 'asserts ' : ''}${escapeHtml(t.name)}${t.targetType ? ` is ${type(t.targetType)}` : ''}`;
      case 'inferred':
        return `infer ${escapeHtml(t.name)}${t.constraint ? ` extends ${type(t.constraint)}` : ''}`;
      case 'templateLiteral':
        return escapeHtml('`') + escapeHtml(t.head) + t.tail.map(([u, text]) => `\${${type(u)}}${escapeHtml(text)}`).join('') + escapeHtml('`');
      case 'reflection':
        return objectType(t.declaration);
    }
  }

  /** An object or function type written inline. */
  function objectType(d: Decl): string {
    const sigs = d.signatures ?? [];
    const members = d.children ?? [];
    const index = d.indexSignatures ?? [];
    if (sigs.length === 1 && members.length === 0 && index.length === 0) return signature(sigs[0], { arrow: true });
    const parts = [...sigs.map((s) => signature(s, {})), ...index.map((s) => indexSignature(s)), ...[...members].sort(byName).map((m) => memberInline(m))];
    return parts.length ? `{ ${parts.join('; ')} }` : '{}';
  }

  function memberInline(m: Decl): string {
    const ro = m.flags.isReadonly ? 'readonly ' : '';
    const opt = m.flags.isOptional ? '?' : '';
    if (m.signatures?.length) return m.signatures.map((s) => `${propertyKey(m.name)}${opt}${signature(s, { bare: true })}`).join('; ');
    if (m.getSignature || m.setSignature) return `${ro}${propertyKey(m.name)}${opt}: ${type(m.getSignature?.type ?? m.setSignature?.parameters?.[0]?.type)}`;
    return `${ro}${propertyKey(m.name)}${opt}: ${type(m.type)}`;
  }

  function indexSignature(s: Signature): string {
    const p = s.parameters?.[0];
    return `[${escapeHtml(p?.name ?? 'key')}: ${type(p?.type)}]: ${type(s.type)}`;
  }

  function typeParameters(tps: TypeParam[] | undefined): string {
    if (!tps?.length) return '';
    const one = (tp: TypeParam) =>
      `${tp.flags.isConst ? 'const ' : ''}${tp.varianceModifier ? `${escapeHtml(tp.varianceModifier)} ` : ''}${escapeHtml(tp.name)}${tp.type ? ` extends ${type(tp.type)}` : ''}${tp.default ? ` = ${type(tp.default)}` : ''}`;
    return `&lt;${tps.map(one).join(', ')}&gt;`;
  }

  function parameter(p: Param): string {
    return `${p.flags.isRest ? '...' : ''}${escapeHtml(p.name)}${p.flags.isOptional || p.defaultValue !== undefined ? '?' : ''}: ${type(p.type)}`;
  }

  /**
   * A call or construct signature: `name<T>(a: A): R` (bare: without the name, for members written inline),
   * or `<T>(a: A) => R` (arrow: a function type).
   */
  function signature(s: Signature, how: { name?: string; arrow?: boolean; bare?: boolean }): string {
    const ctor = s.kind === KIND.ConstructorSignature;
    const params = `(${(s.parameters ?? []).map(parameter).join(', ')})`;
    if (how.arrow) return `${ctor ? 'new ' : ''}${typeParameters(s.typeParameters)}${params} =&gt; ${type(s.type)}`;
    const name = how.bare || how.name === undefined ? '' : escapeHtml(how.name);
    return `${ctor && !how.bare ? 'new ' : ''}${name}${typeParameters(s.typeParameters)}${params}${ctor && !how.bare ? '' : `: ${type(s.type)}`}`;
  }

  // ---- comments -------------------------------------------------------------------------

  /** A display part as markdown: `{@link X}` becomes a link to X's anchor when X is on the page. */
  function partMarkdown(p: Part): string {
    if (p.kind !== 'inline-tag') return p.text;
    const text = p.tag === '@linkcode' ? `\`${p.text}\`` : p.text.replace(/[\\`*_{}[\]()#+\-.!<>|~]/g, '\\$&');
    if (typeof p.target === 'number') {
      const a = anchors.get(p.target);
      return a ? `[${text}](${href(a)})` : text;
    }
    if (typeof p.target === 'string') return `[${text}](${p.target.replace(/[()\s]/g, encodeURIComponent)})`;
    return text;
  }
  const markdown = (parts: Part[] | undefined) => (parts?.length ? md.render(parts.map(partMarkdown).join('')) : '');

  const TAG_LABELS: Record<string, string> = {
    '@deprecated': 'Deprecated',
    '@example': 'Example',
    '@default': 'Default',
    '@see': 'See',
    '@throws': 'Throws',
    '@remarks': '',
    '@description': '',
  };
  /** A comment: its summary, then its block tags (`@returns` is shown with the return type, `@param` with the parameter). */
  function comment(c: Comment | undefined): string {
    if (!c) return '';
    const out = [markdown(c.summary)];
    for (const t of c.blockTags ?? []) {
      if (t.tag === '@returns' || t.tag === '@param' || t.tag === '@typeParam') continue;
      const label = TAG_LABELS[t.tag] ?? escapeHtml(t.tag.slice(1));
      const body = markdown(t.content);
      if (label === '') out.push(body);
      else out.push(`<div class="tag${t.tag === '@deprecated' ? ' deprecated' : ''}"><p class="tag-label">${escapeHtml(label)}${t.name ? ` <code>${escapeHtml(t.name)}</code>` : ''}</p>${body}</div>`);
    }
    const modifiers = (c.modifierTags ?? []).filter((m) => m !== '@packageDocumentation');
    if (modifiers.length) out.push(`<p class="note">${modifiers.map((m) => escapeHtml(m)).join(' ')}</p>`);
    return out.join('');
  }
  const returnsTag = (c: Comment | undefined) => c?.blockTags?.find((t) => t.tag === '@returns');

  // ---- symbols --------------------------------------------------------------------------

  /** A signature's comment, its documented parameters (comment, default) and what it returns. */
  function signatureDoc(s: Signature): string {
    const out = [comment(s.comment)];
    const documented = (s.parameters ?? []).filter((p) => p.comment || p.defaultValue !== undefined);
    if (documented.length) {
      out.push('<dl class="members parameters">');
      for (const p of documented) {
        const dflt = p.defaultValue !== undefined && p.defaultValue !== '...' ? `<p class="note">Default: <code>${escapeHtml(p.defaultValue)}</code></p>` : '';
        out.push(`<dt><code>${parameter(p)}</code></dt><dd>${comment(p.comment)}${dflt}</dd>`);
      }
      out.push('</dl>');
    }
    const returns = returnsTag(s.comment);
    if (returns && s.kind !== KIND.ConstructorSignature) out.push(`<div class="tag"><p class="tag-label">Returns <code>${type(s.type)}</code></p>${markdown(returns.content)}</div>`);
    return out.join('');
  }

  /** "Inherited from X" when X is described on this page (not for what `Omit<...>` of a generated type hands down). */
  const inherited = (m: Decl) => {
    const from = m.inheritedFrom;
    const owner = from?.type === 'reference' && typeof from.target === 'number' ? declarationOwner(from.target) : undefined;
    const a = owner !== undefined ? anchors.get(owner) : undefined;
    return a && owner !== undefined ? `<p class="note">Inherited from <a href="${escapeHtml(href(a))}"><code>${escapeHtml(declarations.get(owner)?.name ?? '')}</code></a>.</p>` : '';
  };
  /** The symbol a member's id belongs to (for "inherited from" links). */
  function declarationOwner(memberId: number): number | undefined {
    for (const d of declarations.values()) if (d.children?.some((c) => c.id === memberId)) return d.id;
    return undefined;
  }

  /** Members as a definition list; object-typed properties list their own members below (no anchors there). */
  function memberList(members: Decl[], owner: string | undefined, depth: number): string {
    if (!members.length) return '';
    const out = ['<dl class="members">'];
    for (const m of members) {
      const a = owner !== undefined ? anchors.get(m.id) : undefined;
      const id = a ? ` id="${escapeHtml(a)}"` : '';
      const stat = m.flags.isStatic ? 'static ' : '';
      const link = (code: string) => (a ? `<a class="anchor" href="${escapeHtml(href(a))}">${code}</a>` : code);
      if (m.kind === KIND.Constructor || m.signatures?.length) {
        const sigs = m.signatures ?? [];
        sigs.forEach((s, i) => {
          const code = m.kind === KIND.Constructor ? signature(s, { name: owner ?? m.name }) : `${stat}${propertyKey(m.name)}${m.flags.isOptional ? '?' : ''}${signature(s, { bare: true })}`;
          out.push(`<dt${i === 0 ? id : ''}><code>${link(code)}</code></dt><dd>${i === 0 ? comment(m.comment) : ''}${signatureDoc(s)}${i === sigs.length - 1 ? inherited(m) : ''}</dd>`);
        });
        continue;
      }
      if (m.getSignature || m.setSignature) {
        const parts = [];
        if (m.getSignature) parts.push(`${stat}get ${propertyKey(m.name)}(): ${type(m.getSignature.type)}`);
        if (m.setSignature) parts.push(`${stat}set ${propertyKey(m.name)}(${(m.setSignature.parameters ?? []).map(parameter).join(', ')})`);
        out.push(`<dt${id}><code>${link(parts.join('<br>'))}</code></dt><dd>${comment(m.comment)}${comment(m.getSignature?.comment)}${comment(m.setSignature?.comment)}${inherited(m)}</dd>`);
        continue;
      }
      const object = m.type?.type === 'reflection' && (m.type.declaration.children?.length ?? 0) > 0 ? m.type.declaration : undefined;
      // An object type is written inline when that is short and none of its members has a comment; else its
      // members are listed below, folded from the second level on (the contract's `paths` is a deep tree).
      const nested = object && !(inlineable(object) && m.type) ? object : undefined;
      const typeText = nested ? objectSummary(nested) : type(m.type);
      const value = m.kind === KIND.EnumMember || m.defaultValue === undefined || m.defaultValue === '...' ? '' : `<p class="note">Default: <code>${escapeHtml(m.defaultValue)}</code></p>`;
      const code = `${stat}${m.flags.isReadonly ? 'readonly ' : ''}${propertyKey(m.name)}${m.flags.isOptional ? '?' : ''}${m.kind === KIND.EnumMember ? ' = ' : ': '}${typeText}`;
      let inner = '';
      if (nested) {
        const list = memberList([...(nested.children ?? [])].sort(byName), undefined, depth + 1);
        const count = nested.children?.length ?? 0;
        inner = depth === 0 ? list : `<details><summary>${count} member${count === 1 ? '' : 's'}</summary>${list}</details>`;
      }
      out.push(`<dt${id}><code>${link(code)}</code></dt><dd>${comment(m.comment)}${value}${inherited(m)}${inner}</dd>`);
    }
    out.push('</dl>');
    return out.join('');
  }

  /** Short enough to read inline (at most INLINE_MAX characters shown), and no member has a comment that would be lost. */
  function inlineable(d: Decl): boolean {
    const undocumented = (m: Decl): boolean => !m.comment && (m.type?.type !== 'reflection' || (m.type.declaration.children ?? []).every(undocumented)) && !(m.signatures ?? []).some((s) => s.comment);
    return (d.children ?? []).every(undocumented) && visibleLength(objectType(d)) <= INLINE_MAX;
  }

  /** An object type whose members are listed below it: its index and call signatures inline, `{ … }` for the rest. */
  function objectSummary(d: Decl): string {
    const extra = [...(d.signatures ?? []).map((s) => signature(s, {})), ...(d.indexSignatures ?? []).map(indexSignature)];
    return `{ ${[...extra, '…'].join('; ')} }`;
  }

  function heritage(d: Decl): string {
    const ext = d.extendedTypes?.length ? ` extends ${d.extendedTypes.map((t) => type(t)).join(', ')}` : '';
    const impl = d.implementedTypes?.length ? ` implements ${d.implementedTypes.map((t) => type(t)).join(', ')}` : '';
    return `${ext}${impl}`;
  }

  function symbol(d: Decl): string {
    const a = anchors.get(d.id) ?? '';
    const kindName = SYMBOL_KIND_NAMES[d.kind] ?? 'export';
    const head = `<h4><span class="kind">${kindName}</span><a class="anchor" href="${escapeHtml(href(a))}">${escapeHtml(d.name)}</a></h4>`;
    const out = [`<section class="symbol" id="${escapeHtml(a)}">`, head];
    const name = d.name;
    switch (d.kind) {
      case KIND.Function:
        out.push(comment(d.comment));
        for (const s of d.signatures ?? []) out.push(`<pre class="signature"><code>${signature(s, { name })}</code></pre>`, signatureDoc(s));
        break;
      case KIND.Class:
      case KIND.Interface: {
        const word = d.kind === KIND.Class ? 'class' : 'interface';
        out.push(
          `<pre class="signature"><code>${word} ${escapeHtml(name)}${typeParameters(d.typeParameters)}${heritage(d)}${d.indexSignatures?.length ? ` { ${d.indexSignatures.map(indexSignature).join('; ')} }` : ''}</code></pre>`,
        );
        out.push(comment(d.comment));
        out.push(memberList(membersOf(d), name, 0));
        break;
      }
      case KIND.TypeAlias: {
        const object = d.type?.type === 'reflection' && (d.type.declaration.children?.length ?? 0) > 0 ? d.type.declaration : undefined;
        out.push(`<pre class="signature"><code>type ${escapeHtml(name)}${typeParameters(d.typeParameters)} = ${object ? objectSummary(object) : type(d.type)}</code></pre>`);
        out.push(comment(d.comment));
        if (object) out.push(memberList(membersOf(d), name, 0));
        break;
      }
      case KIND.Variable: {
        const value = d.defaultValue !== undefined && d.defaultValue !== '...' ? ` = ${escapeHtml(d.defaultValue)}` : '';
        out.push(`<pre class="signature"><code>${d.flags.isConst ? 'const' : 'let'} ${escapeHtml(name)}: ${type(d.type)}${value}</code></pre>`);
        out.push(comment(d.comment));
        break;
      }
      default:
        out.push(comment(d.comment));
        out.push(memberList(membersOf(d), name, 0));
    }
    out.push('</section>');
    return out.join('\n');
  }

  // ---- page -----------------------------------------------------------------------------

  const toc: string[] = ['<nav class="toc" aria-label="Contents"><ul>'];
  const body: string[] = [];
  for (const m of modules) {
    const ma = moduleAnchor.get(m) ?? '';
    const mine = homed(m);
    const elsewhere = (m.children ?? []).filter((c) => declarations.has(targetOf(c)) && home.get(targetOf(c)) !== m);
    toc.push(`<li><a href="${escapeHtml(href(ma))}">${escapeHtml(m.name)}</a>`);
    body.push(
      `<section class="module" aria-labelledby="${escapeHtml(ma)}">`,
      `<h2 class="module" id="${escapeHtml(ma)}"><a class="anchor" href="${escapeHtml(href(ma))}">${escapeHtml(m.name)}</a></h2>`,
      comment(m.comment),
    );
    if (elsewhere.length) {
      // Re-exports, by the entry point that describes them: whole entry points when all of it is re-exported.
      const byHome = new Map<Decl, Child[]>();
      for (const c of elsewhere) {
        const h = home.get(targetOf(c));
        if (h) byHome.set(h, [...(byHome.get(h) ?? []), c]);
      }
      const lines: string[] = [];
      for (const other of modules.filter((o) => byHome.has(o))) {
        const list = byHome.get(other) ?? [];
        const all = homed(other).every((d) => list.some((c) => targetOf(c) === d.id));
        const link = `<a href="${escapeHtml(href(moduleAnchor.get(other) ?? ''))}"><code>${escapeHtml(other.name)}</code></a>`;
        const names = list
          .map((c) => ({ name: c.name, a: anchors.get(targetOf(c)) ?? '' }))
          .sort(byName)
          .map((c) => `<a href="${escapeHtml(href(c.a))}"><code>${escapeHtml(c.name)}</code></a>`)
          .join(', ');
        lines.push(all ? `<li>everything ${link} exports</li>` : `<li>from ${link}: ${names}</li>`);
      }
      body.push(`<p>Also exports, described with the entry point named:</p><ul class="reexports">${lines.join('')}</ul>`);
    }
    const groups = SYMBOL_GROUPS.map((g) => ({ title: g.title, items: mine.filter((d) => g.kinds.includes(d.kind)) }));
    const others = mine.filter((d) => !SYMBOL_GROUPS.some((g) => g.kinds.includes(d.kind)));
    if (others.length) groups.push({ title: 'Other', items: others });
    const present = groups.filter((g) => g.items.length);
    if (present.length) toc.push('<ul>');
    for (const g of present) {
      toc.push(`<li class="group">${escapeHtml(g.title)}<ul>${g.items.map((d) => `<li><a href="${escapeHtml(href(anchors.get(d.id) ?? ''))}">${escapeHtml(d.name)}</a></li>`).join('')}</ul></li>`);
      body.push(`<h3>${escapeHtml(g.title)}</h3>`, ...g.items.map(symbol));
    }
    if (present.length) toc.push('</ul>');
    toc.push('</li>');
    body.push('</section>');
  }
  toc.push('</ul></nav>');

  const title = `${project.name} API reference`;
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title>`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<!-- One file, no script: nothing else is loaded, and the browser is told to load nothing. -->',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    '<link rel="icon" href="data:,">',
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    NAV,
    '<div class="layout">',
    toc.join('\n'),
    '<main>',
    `<h1>${escapeHtml(title)}</h1>`,
    `<p>Every export of the SDK's entry points, with its type and doc comment: rendered from the SDK's declarations (<code>sdk/src/</code>) by TypeDoc at codegen time. Each symbol is described under the most specific entry point that exports it.</p>`,
    ...body,
    '</main>',
    '</div>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

const SYMBOL_KIND_NAMES: Record<number, string> = {
  [KIND.Function]: 'function',
  [KIND.Class]: 'class',
  [KIND.Interface]: 'interface',
  [KIND.TypeAlias]: 'type',
  [KIND.Variable]: 'const',
  [KIND.Enum]: 'enum',
  [KIND.Namespace]: 'namespace',
  [KIND.Module]: 'module',
};
