/**
 * The API reference served under /docs, rendered at codegen time from the three contracts
 * by Redocly CLI's `build-docs` (Redoc 3, which renders OpenAPI, AsyncAPI and GraphQL):
 *
 *   generated/docs/rest.html      contracts/openapi.yaml          -> GET /docs
 *   generated/docs/realtime.html  contracts/asyncapi.yaml         -> GET /docs/realtime
 *   generated/docs/graphql.html   contracts/schema.graphql, with contracts/operations/
 *                                 listed in the schema description -> GET /docs/graphql
 *   generated/docs/redoc.standalone.js  Redoc's browser bundle    -> GET /docs/redoc.standalone.js
 *
 * Why Redocly CLI: it is one dependency-free package that runs on Node 20 with no network
 * (redoc 3 and Scalar need Node 22; @asyncapi/html-template needs the AsyncAPI generator,
 * which needs Node 22), and one renderer gives all three pages the same look. Each page is
 * prerendered HTML that Redoc's bundle hydrates; the bundle is served by us, never a CDN.
 * It is written once rather than inlined into each page (2.3 MB instead of 3 x 2.3 MB).
 * Every word on the pages comes from the contracts; codegen/docs/page.hbs only adds the
 * navigation between the pages and the links to the contracts themselves. The fourth page,
 * the SDK's (generated/docs/sdk.html -> GET /docs/sdk), is codegen/sdkDocs.ts's.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Kind, parse, print, type SchemaDefinitionNode } from 'graphql';
import { readOperations } from './operations';

const run = promisify(execFile);

/** Where the pages load Redoc from: this service (the pages must work with no internet). */
export const DOCS_SCRIPT_PATH = '/docs/redoc.standalone.js';

/**
 * Redocly CLI (ESM, bin only: no `exports`), run as a child process. Found where this code's
 * own dependencies are, not under `root` (codegen may read the contracts of another checkout).
 */
const cliDir = () => dirname(require.resolve('@redocly/cli/package.json'));

const operationKind = (text: string) => parse(text).definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION)?.operation ?? 'operation';

/**
 * The GraphQL page's input: the schema as written, with the client operations of
 * contracts/operations/ (the allowlist, and what the SDK persists) appended to the schema
 * description, since Redoc renders SDL and an operation is not SDL.
 */
export function graphqlDocsInput(root: string): string {
  const doc = parse(readFileSync(join(root, 'contracts/schema.graphql'), 'utf8'));
  const ops = readOperations(root).sort((a, b) => a.name.localeCompare(b.name));
  const section = [
    '## Client operations',
    '',
    'The operations of `contracts/operations/`: the SDK sends them by hash (APQ), and in `allowlist` mode they are the only ones that run.',
    ...ops.flatMap((o) => ['', `### ${operationKind(o.text)} ${o.name}`, '', `SHA-256 \`${o.hash}\``, '', '```graphql', o.text.trim(), '```']),
  ].join('\n');
  const definitions = doc.definitions.map((d) => {
    if (d.kind !== Kind.SCHEMA_DEFINITION) return d;
    const text = d.description ? `${d.description.value}\n\n${section}` : section;
    return { ...d, description: { kind: Kind.STRING, value: text, block: true } } satisfies SchemaDefinitionNode;
  });
  if (!definitions.some((d) => d.kind === Kind.SCHEMA_DEFINITION)) throw new Error('contracts/schema.graphql: a `schema { ... }` definition is needed to carry the reference text');
  return `${print({ ...doc, definitions })}\n`;
}

async function buildPage(work: string, input: string, page: 'rest' | 'realtime' | 'graphql'): Promise<string> {
  const out = join(work, `${page}.html`);
  const cli = join(cliDir(), 'bin/cli.js');
  const args = [cli, 'build-docs', input, '-o', out, '-t', join(__dirname, 'docs/page.hbs'), `--templateOptions.${page}=true`];
  // cwd: an empty directory, so no stray redocly.yaml is picked up; telemetry off, so the
  // CLI sends nothing and the page is told to send nothing (it is also in the output).
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  await run(process.execPath, args, { cwd: work, env, maxBuffer: 16 * 1024 * 1024 });
  return localScript(readFileSync(out, 'utf8'), page);
}

/** build-docs points the page at Redoc's CDN; ours serves the same file (same sha384 integrity). */
export function localScript(html: string, page: string): string {
  const cdn = /https:\/\/cdn\.redocly\.com\/redoc\/v[0-9][^"/]*\/bundles\/redoc\.standalone\.js/g;
  const found = html.match(cdn) ?? [];
  // The preload link and the module import: anything else means build-docs changed its output.
  if (found.length !== 2) throw new Error(`docs (${page}): expected 2 references to Redoc's CDN bundle, found ${found.length}`);
  const local = html.replace(cdn, DOCS_SCRIPT_PATH);
  const remote = local.match(/<(?:script|link)\b[^>]*\b(?:src|href)="(?:https?:)?\/\/[^"]*"/);
  if (remote) throw new Error(`docs (${page}): the page would load ${remote[0]} at run time`);
  return local;
}

export async function generateDocs(root: string): Promise<Record<string, string>> {
  const work = mkdtempSync(join(tmpdir(), 'orderline-docs-'));
  try {
    const sdl = join(work, 'schema.graphql');
    writeFileSync(sdl, graphqlDocsInput(root));
    const [rest, realtime, graphql] = await Promise.all([
      buildPage(work, join(root, 'contracts/openapi.yaml'), 'rest'),
      buildPage(work, join(root, 'contracts/asyncapi.yaml'), 'realtime'),
      buildPage(work, sdl, 'graphql'),
    ]);
    return {
      'generated/docs/rest.html': rest,
      'generated/docs/realtime.html': realtime,
      'generated/docs/graphql.html': graphql,
      'generated/docs/redoc.standalone.js': readFileSync(join(cliDir(), 'lib/chunks/redoc.standalone.js'), 'utf8'),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
