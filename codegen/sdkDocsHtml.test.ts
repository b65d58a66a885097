/**
 * The SDK reference's renderer on a small model of TypeDoc's JSON format: what it shows,
 * that it escapes every text of the model, that it is deterministic, and that nothing on the
 * page comes from elsewhere. (TypeDoc itself is ESM-only and runs in codegen, not in jest:
 * the model here is written by hand in its schema; codegen/index.test.ts runs the real thing.)
 */
import type { JSONOutput } from 'typedoc';
import { KIND, renderSdkReference, type Plain, type SdkModel } from './sdkDocsHtml';

type Declaration = Plain<JSONOutput.DeclarationReflection>;
type Reference = Plain<JSONOutput.ReferenceReflection>;
const text = (t: string): Plain<JSONOutput.CommentDisplayPart> => ({ kind: 'text', text: t });
const string: Plain<JSONOutput.SomeType> = { type: 'intrinsic', name: 'string' };

/** `pkg` re-exports all of `pkg/client`: `connect`, `Options`, `Mode`, `ClientError`, `VERSION`. */
function model(): SdkModel {
  const options: Declaration = {
    id: 10,
    name: 'Options',
    variant: 'declaration',
    kind: KIND.Interface,
    flags: {},
    comment: { summary: [text('What <b>connect</b> takes & uses.')] },
    children: [
      {
        id: 11,
        name: 'url',
        variant: 'declaration',
        kind: KIND.Property,
        flags: {},
        comment: { summary: [text('Where to connect, e.g. '), { kind: 'code', text: '`https://x/?a=1&b=<2>`' }, text('.')] },
        type: string,
      },
      {
        id: 12,
        name: 'x-<weird>',
        variant: 'declaration',
        kind: KIND.Property,
        flags: { isOptional: true, isReadonly: true },
        comment: { summary: [text('A key that is not an identifier.')] },
        type: { type: 'literal', value: '"quoted" <tag>' },
      },
      {
        id: 13,
        name: 'retries',
        variant: 'declaration',
        kind: KIND.Property,
        flags: { isOptional: true },
        type: {
          type: 'reflection',
          declaration: {
            id: 14,
            name: '__type',
            variant: 'declaration',
            kind: 65536,
            flags: {},
            children: [
              { id: 15, name: 'max', variant: 'declaration', kind: KIND.Property, flags: {}, type: { type: 'intrinsic', name: 'number' } },
              { id: 16, name: 'mode', variant: 'declaration', kind: KIND.Property, flags: {}, type: { type: 'reference', target: 30, name: 'Mode', package: 'pkg' } },
            ],
          },
        },
      },
    ],
  };
  const connect: Declaration = {
    id: 20,
    name: 'connect',
    variant: 'declaration',
    kind: KIND.Function,
    flags: {},
    signatures: [
      {
        id: 21,
        name: 'connect',
        variant: 'signature',
        kind: 4096,
        flags: {},
        comment: {
          summary: [text('Opens a **connection** (see '), { kind: 'inline-tag', tag: '@link', text: 'Options', target: 10 }, text(').\n\n<script>alert(1)</script> <img src=x onerror=alert(2)>')],
          blockTags: [
            { tag: '@returns', content: [text('the client, <ready>.')] },
            { tag: '@example', content: [{ kind: 'code', text: '```ts\nconnect({ url: "a<b" });\n```' }] },
          ],
        },
        typeParameters: [
          { id: 22, name: 'T', variant: 'typeParam', kind: 131072, flags: {}, type: { type: 'typeOperator', operator: 'keyof', target: { type: 'reference', target: 10, name: 'Options', package: 'pkg' } } },
        ],
        parameters: [
          { id: 23, name: 'options', variant: 'param', kind: 32768, flags: {}, type: { type: 'reference', target: 10, name: 'Options', package: 'pkg' } },
          {
            id: 24,
            name: 'timeoutMs',
            variant: 'param',
            kind: 32768,
            flags: { isOptional: true },
            comment: { summary: [text('Gives up after this long.')] },
            type: { type: 'intrinsic', name: 'number' },
            defaultValue: '5_000',
          },
        ],
        type: {
          type: 'reference',
          target: { packageName: 'typescript', packagePath: 'lib/lib.es5.d.ts', qualifiedName: 'Promise' },
          typeArguments: [{ type: 'array', elementType: { type: 'union', types: [string, { type: 'reference', target: 22, name: 'T', package: 'pkg', refersToTypeParameter: true }] } }],
          name: 'Promise',
          package: 'typescript',
        },
      },
    ],
  };
  const mode: Declaration = {
    id: 30,
    name: 'Mode',
    variant: 'declaration',
    kind: KIND.TypeAlias,
    flags: {},
    comment: { summary: [text('How to retry.')], blockTags: [{ tag: '@deprecated', content: [text('use `max`.')] }] },
    type: {
      type: 'union',
      types: [
        { type: 'literal', value: 'a&b' },
        { type: 'literal', value: 2 },
        { type: 'literal', value: null },
      ],
    },
  };
  const clientError: Declaration = {
    id: 40,
    name: 'ClientError',
    variant: 'declaration',
    kind: KIND.Class,
    flags: {},
    extendedTypes: [{ type: 'reference', target: { packageName: 'typescript', packagePath: 'lib/lib.es5.d.ts', qualifiedName: 'Error' }, name: 'Error', package: 'typescript' }],
    children: [
      {
        id: 41,
        name: 'constructor',
        variant: 'declaration',
        kind: KIND.Constructor,
        flags: {},
        signatures: [
          {
            id: 42,
            name: 'ClientError',
            variant: 'signature',
            kind: KIND.ConstructorSignature,
            flags: {},
            parameters: [{ id: 43, name: 'status', variant: 'param', kind: 32768, flags: {}, type: { type: 'intrinsic', name: 'number' } }],
            type: { type: 'reference', target: 40, name: 'ClientError', package: 'pkg' },
          },
        ],
      },
      { id: 44, name: 'status', variant: 'declaration', kind: KIND.Property, flags: { isReadonly: true }, type: { type: 'intrinsic', name: 'number' } },
      // Error's own, from outside the package: not listed.
      { id: 45, name: 'stack', variant: 'declaration', kind: KIND.Property, flags: { isExternal: true, isInherited: true, isOptional: true }, type: string },
    ],
  };
  const version: Declaration = { id: 50, name: 'VERSION', variant: 'declaration', kind: KIND.Variable, flags: { isConst: true }, type: { type: 'literal', value: '1.0' }, defaultValue: "'1.0'" };
  const exports = [connect, clientError, options, mode, version];
  const reference = (d: Declaration, id: number): Reference => ({ id, name: d.name, variant: 'reference', kind: 4194304, flags: {}, target: d.id });
  const modules: Declaration[] = [
    { id: 1, name: 'pkg', variant: 'declaration', kind: KIND.Module, flags: {}, comment: { summary: [text('Everything.')] }, children: exports.map((d, i) => reference(d, 100 + i)) },
    { id: 2, name: 'pkg/client', variant: 'declaration', kind: KIND.Module, flags: {}, comment: { summary: [text('The client & its <options>.')] }, children: exports },
  ];
  return { id: 0, name: 'pkg', variant: 'project', kind: 1, flags: {}, schemaVersion: '2.0', children: modules, symbolIdMap: {}, files: { entries: {}, reflections: {} } };
}

/** The same model with every list of children in the opposite order (as another TypeDoc sort would give). */
function reversed(p: SdkModel): SdkModel {
  const flip = <T extends { children?: (Declaration | Reference)[] }>(d: T): T => ({ ...d, children: d.children && [...d.children].reverse().map((c) => ('target' in c ? c : flip(c))) });
  return { ...p, children: [...(p.children ?? [])].reverse().map(flip) };
}

describe('the SDK reference page', () => {
  const html = renderSdkReference(model(), { entryOrder: ['pkg', 'pkg/client'] });
  const main = html.slice(html.indexOf('<main>'));

  it('shows each function with its signature, parameters and return type, linked to the types on the page', () => {
    expect(main).toContain(
      '<pre class="signature"><code>connect&lt;T extends keyof <a href="#Options">Options</a>&gt;(options: <a href="#Options">Options</a>, timeoutMs?: number): Promise&lt;(string | T)[]&gt;</code></pre>',
    );
    expect(main).toContain('<p class="note">Default: <code>5_000</code></p>');
    expect(main).toContain('<p class="tag-label">Returns <code>Promise&lt;(string | T)[]&gt;</code></p><p>the client, &lt;ready&gt;.</p>');
  });

  it('shows interfaces with their members, types and comments, classes without what they inherit from outside the package', () => {
    expect(main).toContain('<dt id="Options.url"><code><a class="anchor" href="#Options.url">url: string</a></code></dt>');
    expect(main).toContain('<code>https://x/?a=1&amp;b=&lt;2&gt;</code>');
    expect(main).toContain('readonly &quot;x-&lt;weird&gt;&quot;?: &quot;\\&quot;quoted\\&quot; &lt;tag&gt;&quot;');
    expect(main).toContain('retries?: { max: number; mode: <a href="#Mode">Mode</a> }');
    expect(main).toContain('<code>class ClientError extends Error</code>');
    expect(main).toContain('new ClientError(status: number)');
    expect(main).toContain('readonly status: number');
    expect(main).not.toContain('stack');
    expect(main).toContain('type Mode = &quot;a&amp;b&quot; | 2 | null');
    expect(main).toContain('<p class="tag-label">Deprecated</p><p>use <code>max</code>.</p>');
    expect(main).toContain('const VERSION: &quot;1.0&quot; = &#39;1.0&#39;');
  });

  it('renders comments from markdown and escapes everything that came from the model', () => {
    expect(main).toContain('Opens a <strong>connection</strong> (see <a href="#Options">Options</a>).');
    expect(main).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt;');
    expect(main).toContain('<pre><code class="language-ts">connect({ url: &quot;a&lt;b&quot; });\n</code></pre>');
    expect(main).toContain('What &lt;b&gt;connect&lt;/b&gt; takes &amp; uses.');
    expect(html).not.toMatch(/<(script|img|iframe|object|b)\b/i);
    expect(html).not.toMatch(/<[^>]*\son[a-z]+=/i); // no event handler attribute in any tag
  });

  it('has an anchor per symbol and member, and a table of contents per entry point and kind', () => {
    for (const id of ['module-pkg', 'module-pkg-client', 'connect', 'Options', 'Options.url', 'Options.retries', 'Mode', 'ClientError', 'ClientError.status', 'VERSION']) {
      expect(html).toContain(`id="${id}"`);
    }
    const toc = html.slice(html.indexOf('<nav class="toc"'), html.indexOf('</nav>', html.indexOf('<nav class="toc"')));
    expect(toc).toContain('<a href="#module-pkg-client">pkg/client</a>');
    expect(toc).toContain('<li class="group">Functions<ul><li><a href="#connect">connect</a></li></ul></li>');
    expect(toc).toContain('<li class="group">Interfaces<ul><li><a href="#Options">Options</a></li></ul></li>');
    // Each href on the page points at an id on the page or at another page of the reference.
    const ids = new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]));
    for (const [, target] of html.matchAll(/ href="([^"]*)"/g)) {
      if (target.startsWith('#')) expect(ids).toContain(decodeURI(target.slice(1)));
      else expect(target).toMatch(/^\/(docs(\/(realtime|graphql|sdk))?|openapi\.(yaml|json)|asyncapi\.yaml|schema\.graphql)$|^data:,$/);
    }
  });

  it('describes a re-exported symbol once, with the most specific entry point, and links it from the others', () => {
    expect(html.match(/<section class="symbol" id="connect">/g)).toHaveLength(1);
    const pkg = html.slice(html.indexOf('id="module-pkg"'), html.indexOf('id="module-pkg-client"'));
    expect(pkg).toContain('<li>everything <a href="#module-pkg-client"><code>pkg/client</code></a> exports</li>');
    expect(pkg).not.toContain('<section class="symbol"');
  });

  it('is the same page, byte for byte, for the same model in any order', () => {
    expect(renderSdkReference(model(), { entryOrder: ['pkg', 'pkg/client'] })).toBe(html);
    expect(renderSdkReference(reversed(model()), { entryOrder: ['pkg', 'pkg/client'] })).toBe(html);
  });

  it('is one self-contained page linking the rest of the reference, with the SDK page current', () => {
    expect(html).toMatch(/^<!DOCTYPE html>\n<html lang="en">/);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`);
    expect(html).not.toMatch(/<(script|link)\b[^>]*\b(src|href)="(https?:)?\/\//);
    for (const href of ['/docs', '/docs/realtime', '/docs/graphql', '/openapi.yaml', '/openapi.json', '/asyncapi.yaml', '/schema.graphql']) expect(html).toContain(`href="${href}"`);
    expect(html).toContain('<a href="/docs/sdk" aria-current="page">SDK</a>');
  });

  it("refuses a model in another version of TypeDoc's format", () => {
    expect(() => renderSdkReference({ ...model(), schemaVersion: '3.0' })).toThrow("TypeDoc's model is schema 3.0");
  });
});
