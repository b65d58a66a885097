/**
 * The generated `Handlers` interface is what makes the contract binding: these tests
 * change one handler in memory (deleted, answering a status the contract does not
 * declare, answering a media type it does not declare) and show the TypeScript
 * compiler, with the project's own tsconfig, refuses each, naming the operation or
 * the offending value. The unchanged source is the control.
 *
 * One program is built for the control and reused (`oldProgram`) for each mutation,
 * so only the changed file is checked again.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..');
const HANDLERS = join(root, 'src/http/rest/handlers.ts');

function options(): ts.CompilerOptions {
  const file = ts.readConfigFile(join(root, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  return { ...ts.parseJsonConfigFileContent(file.config, ts.sys, root).options, noEmit: true };
}

const opts = options();
// The service only: src/ and generated/ (tests and tools add nothing the binding needs).
const roots = [join(root, 'src/main.ts'), join(root, 'src/app.ts'), HANDLERS];
let base: ts.Program | undefined;

function check(mutate?: (text: string) => string): string[] {
  const host = ts.createCompilerHost(opts);
  const original = host.getSourceFile; // eslint-disable-line @typescript-eslint/unbound-method -- called below with call(host)
  host.getSourceFile = (name, lang, onError, fresh) => {
    if (mutate && name === HANDLERS) {
      const text = readFileSync(HANDLERS, 'utf8');
      const mutated = mutate(text);
      expect(mutated).not.toBe(text);
      return ts.createSourceFile(name, mutated, lang);
    }
    return original.call(host, name, lang, onError, fresh);
  };
  const program = ts.createProgram({ rootNames: roots, options: opts, host, oldProgram: base });
  if (!mutate) base = program;
  return ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? d.file.fileName.slice(root.length + 1) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('generated handler types', () => {
  it('accept the unmodified source (the control)', () => {
    expect(check()).toEqual([]);
  }, 120_000);

  it('make tsc fail when one handler is deleted', () => {
    const errors = check((text) => text.replace('    getOrder: read,\n', ''));
    expect(errors.join('\n')).toMatch(/getOrder/);
  }, 120_000);

  it('make tsc fail when a handler answers a status its operations do not declare', () => {
    // 410 Gone is a real HTTP status, but no operation of the getOrder family declares it.
    const errors = check((text) =>
      text.replace('    getOrder: read,\n', "    getOrder: async (req, ctx) => (req.params.orderId > 0 ? read(req, ctx) : { status: 410, contentType: 'application/problem+json', body: problem('NOT_FOUND') }),\n"),
    );
    expect(errors.join('\n')).toMatch(/410/);
  }, 120_000);

  it('make tsc fail when a handler answers a media type its operations do not declare', () => {
    // getOrder declares JSON and the vendor types; text/csv is not among them.
    const errors = check((text) => text.replace('    getOrder: read,\n', "    getOrder: async (req, ctx) => (req.params.orderId > 0 ? read(req, ctx) : { status: 200, contentType: 'text/csv', body: 'id\\n1' }),\n"));
    expect(errors.join('\n')).toMatch(/text\/csv/);
  }, 120_000);

  it('make tsc fail when a response lacks a header its contract declares required (ETag on a write, Location on a create)', () => {
    const noEtag = check((text) =>
      text.replace(
        "const headers: OrderHeaders = withDeprecation(ctx, v, bodyVersion, { 'Cache-Control': CACHE_CONTROL, Vary: VARY, 'Api-Version': String(v), ETag: etagOf(order, v, neg.vendor) });",
        "const headers = withDeprecation(ctx, v, bodyVersion, { 'Cache-Control': CACHE_CONTROL, Vary: VARY, 'Api-Version': String(v) });",
      ),
    );
    expect(noEtag.join('\n')).toMatch(/ETag/);
    const noLocation = check((text) =>
      text.replace(/const headers: OrderHeaders & \{ Location: string \} = withDeprecation\(([^;]*?)\s*Location: `\$\{base\}\/\$\{order\.id\}`,\s*\}\);/, 'const headers = withDeprecation($1 });'),
    );
    expect(noLocation.join('\n')).toMatch(/Location/);
  }, 120_000);
});
