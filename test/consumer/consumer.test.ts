/**
 * The SDK as a client team gets it: `npm pack` of sdk/, installed from the tarball into
 * a temporary project outside the repo (from the npm registry for its dependencies, as a
 * client team's install would be). Then:
 * - the installed tree holds no server dependency and nothing native;
 * - a sample consumer (sdk/test/consumer/sample.mts) type-checks with the flags client
 *   teams use (strict, NodeNext, verbatimModuleSyntax, exactOptionalPropertyTypes,
 *   skipLibCheck false, no DOM lib), and so does its CommonJS spelling;
 * - both run against a real server: a cached read (304), an If-Match update through a
 *   real 412, every page, a typed GraphQL operation and a client-defined typed document,
 *   a stream over WebSocket and SSE across a forced server-side drop.
 * Needs the npm registry (or a warm npm cache); a failure to install says so.
 */
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../support/server';
import { consumerProject, runWithDrops, toCommonJs, type ConsumerProject } from './project';

jest.setTimeout(600_000);

const REPO = join(__dirname, '../..');
/** Server-side packages: none may reach a client's install. */
const SERVER_ONLY = ['koa', '@koa/router', '@koa/cors', 'better-sqlite3', 'pg', 'ioredis', 'pino', 'prom-client', 'ajv', 'graphql-http', 'raw-body', 'yaml', 'dataloader', '@graphql-tools/schema', 'ws'];

/**
 * The TypeScript blocks of the READMEs, each a module of its own: ```ts as ESM (.mts),
 * ```cts as CommonJS (.cts). They read ORDERLINE_URL and TOKEN, as the READMEs say.
 */
const SNIPPETS = ['README.md', 'sdk/README.md'].flatMap((doc) =>
  [...readFileSync(join(REPO, doc), 'utf8').matchAll(/^```(ts|cts)\n([\s\S]*?)^```$/gm)].map((m, i) => {
    const name = `${doc}#${i + 1}`;
    return { name, file: `snippet-${doc.replace(/\W+/g, '-')}-${i + 1}.${m[1] === 'cts' ? 'cts' : 'mts'}`, code: m[2] };
  }),
);

let project: ConsumerProject;
let srv: TestServer;

beforeAll(async () => {
  project = consumerProject();
  srv = await startTestServer();
  await srv.store.seedDemo(); // users, friends, posts for the GraphQL reads
});
afterAll(async () => {
  await srv?.close();
  project?.dispose();
});

describe('@orderline/sdk installed from its tarball', () => {
  it('ships built JavaScript and declarations only, and installs no server dependency and nothing native', () => {
    const { tarball, installed } = project;
    expect(tarball.files.some((f) => f.startsWith('dist/esm/') && f.endsWith('.js'))).toBe(true);
    expect(tarball.files.some((f) => f.startsWith('dist/cjs/') && f.endsWith('.d.ts'))).toBe(true);
    expect(tarball.files.filter((f) => /(^|\/)src\/|\.test\.|\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
    const names = installed.map((p) => p.name);
    expect(names).toContain('@orderline/sdk');
    expect(names.filter((n) => SERVER_ONLY.includes(n))).toEqual([]);
    expect(installed.filter((p) => p.hasInstallScript).map((p) => p.name)).toEqual([]);
    const nativeFiles = (dir: string): string[] =>
      readdirSync(dir).flatMap((f) => {
        const p = join(dir, f);
        return statSync(p).isDirectory() ? nativeFiles(p) : /\.node$|binding\.gyp$/.test(f) ? [p] : [];
      });
    expect(nativeFiles(join(project.dir, 'node_modules'))).toEqual([]);
    // What ships documents itself: no link out of the package, no doc comment citing a file that is not shipped.
    const pkg = join(project.dir, 'node_modules/@orderline/sdk');
    expect(readFileSync(join(pkg, 'README.md'), 'utf8')).not.toMatch(/\]\(\.\.\//);
    const declarations = tarball.files.filter((f) => f.endsWith('.d.ts') && !f.includes('/generated/'));
    const citing = declarations.filter((f) => /contracts\/|\w+\.ts\)|DESIGN\.md|\.\.\/README/.test(readFileSync(join(pkg, f), 'utf8')));
    expect(citing).toEqual([]);
    console.log(`@orderline/sdk: packed ${tarball.size} B (${tarball.unpackedSize} B unpacked, ${tarball.files.length} files); installed packages: ${installed.length} (${names.join(', ')})`);
  });

  it('type-checks a consumer with strict, NodeNext, verbatimModuleSyntax, exactOptionalPropertyTypes, skipLibCheck false (ESM and CJS), and every README snippet', () => {
    project.addDevDependencies(['ws@^8', '@types/ws@^8', '@types/node@^20']);
    const sample = readFileSync(join(REPO, 'sdk/test/consumer/sample.mts'), 'utf8');
    writeFileSync(join(project.dir, 'sample.mts'), sample);
    writeFileSync(join(project.dir, 'sample.cts'), toCommonJs(sample));
    for (const s of SNIPPETS) writeFileSync(join(project.dir, s.file), s.code);
    expect(SNIPPETS.length).toBeGreaterThanOrEqual(5);
    expect(project.typecheck(['sample.mts', 'sample.cts', ...SNIPPETS.map((s) => s.file)])).toBe('');
  });

  it('type-checks the root and every subpath entry under Node10 resolution too (CommonJS projects on older settings)', () => {
    project.addDevDependencies(['@types/node@^20']);
    const file = 'node10.ts';
    writeFileSync(
      join(project.dir, file),
      [
        "import { createOrderlineClient } from '@orderline/sdk';",
        "import { listOrders } from '@orderline/sdk/rest';",
        "import { createGraphqlClient } from '@orderline/sdk/graphql';",
        "import { streamOrder } from '@orderline/sdk/realtime';",
        'export const used = [createOrderlineClient, listOrders, createGraphqlClient, streamOrder];',
        '',
      ].join('\n'),
    );
    expect(project.typecheck([file], { module: 'commonjs', moduleResolution: 'node10', verbatimModuleSyntax: false, noEmit: true })).toBe('');
  });

  it.each(['mjs', 'cjs'] as const)('runs as %s against a running server: cache, 412 race, pages, GraphQL, WS and SSE across a drop', async (ext) => {
    const file = join(project.dir, 'dist', `sample.${ext}`);
    expect(existsSync(file)).toBe(true);
    const { code, stdout, stderr } = await runWithDrops(file, srv);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const result = JSON.parse(
      stdout
        .split('\n')
        .find((l) => l.startsWith('RESULT '))!
        .slice(7),
    ) as Record<string, unknown>;
    expect(result).toMatchObject({ read: { statuses: [200, 304] }, update: { patchStatuses: [412, 200], changeCalls: 2 } });
  });

  it.each(SNIPPETS.map((s) => [s.name, s] as const))('README snippet %s runs as written against the server', async (_name, snippet) => {
    const file = join(project.dir, 'dist', snippet.file.replace(/\.mts$/, '.mjs').replace(/\.cts$/, '.cjs'));
    const { code, stderr } = await runWithDrops(file, srv, { TOKEN: srv.alice.token });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });
});
