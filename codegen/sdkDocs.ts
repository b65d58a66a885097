/**
 * The SDK's API reference, generated/docs/sdk.html (GET /docs/sdk): TypeDoc's model of the
 * SDK, with the options of sdk/typedoc.json (its entry points: `@orderline/sdk` and its
 * `/rest`, `/graphql` and `/realtime` entries), rendered as one page by codegen/sdkDocsHtml.ts
 * (TypeDoc's own HTML theme, what `npm run docs:sdk` writes, is a multi-file site).
 *
 * The program TypeDoc reads is the SDK as this codegen run leaves it: sdk/src/generated/
 * (written by codegen/sdk.ts in the same run) is read from memory, not from disk, so one
 * run renders the reference of the contracts as they are now, whatever `--out` says.
 * Type errors in the SDK do not stop codegen (`npm run typecheck` is that gate, and it needs
 * the generated files first); TypeDoc's own warnings (an unresolved `{@link}`) do.
 */
import { basename, join, relative, resolve } from 'node:path';
import { Application, ReflectionKind, TSConfigReader, TypeDocReader, TypeScript as ts, normalizePath, type DocumentationEntryPoint } from 'typedoc';
import { KIND, renderSdkReference } from './sdkDocsHtml';

/** The entry point's import specifier: `index.ts` is the package itself, `rest.ts` is `<package>/rest`. */
const entryName = (pkg: string, file: string) => {
  const base = basename(file).replace(/\.[cm]?tsx?$/, '');
  return base === 'index' ? pkg : `${pkg}/${base}`;
};

export async function generateSdkDocs(root: string, sdkFiles: Record<string, string>): Promise<Record<string, string>> {
  for (const [name, value] of Object.entries(KIND)) {
    if (ReflectionKind[value] !== name) throw new Error(`sdk docs: TypeDoc's ReflectionKind.${name} is no longer ${value}`);
  }
  // Only sdk/typedoc.json and the tsconfig it names: not the process's arguments (codegen's own) nor a package.json.
  const app = await Application.bootstrapWithPlugins({ options: join(root, 'sdk/typedoc.json'), logLevel: 'Warn' }, [new TypeDocReader(), new TSConfigReader()]);
  const options = app.options.getCompilerOptions(app.logger);
  const memory = new Map(Object.entries(sdkFiles).map(([rel, text]) => [resolve(root, rel), text]));
  const host = ts.createCompilerHost(options, true);
  const [readFile, fileExists] = [host.readFile.bind(host), host.fileExists.bind(host)];
  host.readFile = (file) => memory.get(resolve(file)) ?? readFile(file);
  host.fileExists = (file) => memory.has(resolve(file)) || fileExists(file);
  const program = ts.createProgram({ rootNames: app.options.getFileNames(), options, projectReferences: app.options.getProjectReferences(), host });

  const pkg = app.options.getValue('name');
  const entryPoints: DocumentationEntryPoint[] = app.options.getValue('entryPoints').map((file) => {
    const sourceFile = program.getSourceFile(file);
    if (!sourceFile) throw new Error(`sdk docs: entry point ${relative(root, file)} (sdk/typedoc.json) is not in the SDK's program`);
    return { displayName: entryName(pkg, file), sourceFile, program };
  });
  const project = app.converter.convert(entryPoints);
  app.validate(project);
  if (app.logger.hasErrors() || app.logger.hasWarnings()) throw new Error('sdk docs: TypeDoc reported the problems above');

  const entryOrder = entryPoints.map((e) => e.displayName);
  const html = renderSdkReference(app.serializer.projectToObject(project, normalizePath(root)), { entryOrder });
  if (html.includes(root)) throw new Error(`sdk docs: the page would contain the checkout's path (${root})`);
  return { 'generated/docs/sdk.html': html };
}
