/**
 * The size budget a client team's browser bundle pays for the SDK, measured as the
 * browser test bundles it: esbuild, ESM for the browser, minified, dependencies included,
 * code splitting on (as Vite, webpack and Rollup do for a dynamic import), gzip -9.
 * - the REST client alone (`@orderline/sdk/rest`): at most 8 KB;
 * - all three clients (`@orderline/sdk`): at most 15 KB, lazily loaded chunks included;
 * - graphql's printer is not in what loads up front: only `execute()` of a client's own
 *   document loads it (`query()` of a named operation sends the generated text).
 * `node sdk/scripts/size.mjs` prints the same figures for the built package.
 */
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';

const KB = 1024;

interface Measured {
  /** gzip -9 bytes of the entry chunk and what it imports statically (what a page loads up front). */
  initial: number;
  /** gzip -9 bytes of every chunk, lazily loaded ones included. */
  total: number;
  /** Input files that end up in the up-front chunks. */
  initialInputs: string[];
}

async function measure(entry: string): Promise<Measured> {
  const out = await build({
    entryPoints: [join(__dirname, `${entry}.ts`)],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    splitting: true,
    outdir: '/virtual',
    write: false,
    metafile: true,
  });
  const meta: Metafile = out.metafile;
  const base = (path: string) => path.slice(path.lastIndexOf('/') + 1);
  const gz = new Map(out.outputFiles.map((f) => [base(f.path), gzipSync(f.contents, { level: 9 }).length]));
  const [entryOut] = Object.entries(meta.outputs).filter(([, o]) => o.entryPoint !== undefined);
  const initial = new Set<string>();
  const walk = (name: string) => {
    if (initial.has(name)) return;
    initial.add(name);
    for (const imp of meta.outputs[name]?.imports ?? []) if (imp.kind === 'import-statement') walk(imp.path);
  };
  walk(entryOut[0]);
  const sum = (names: Iterable<string>) => [...names].reduce((n, name) => n + (gz.get(base(name)) ?? 0), 0);
  return {
    initial: sum(initial),
    total: sum(gz.keys()),
    initialInputs: [...initial].flatMap((name) => Object.keys(meta.outputs[name]?.inputs ?? {})),
  };
}

describe('the SDK in a browser bundle (minified, gzip -9)', () => {
  it('the REST client alone is at most 8 KB', async () => {
    const rest = await measure('rest');
    console.log(`@orderline/sdk/rest: ${rest.initial} B up front, ${rest.total} B in all`);
    expect(rest.total).toBeLessThanOrEqual(8 * KB);
  });

  it('all three clients are at most 15 KB, lazily loaded chunks included', async () => {
    const all = await measure('index');
    console.log(`@orderline/sdk: ${all.initial} B up front, ${all.total} B in all`);
    expect(all.total).toBeLessThanOrEqual(15 * KB);
  });

  it("carries no lru-cache, and loads graphql's printer only for execute()", async () => {
    const gql = await measure('graphql');
    const all = await measure('index');
    for (const m of [gql, all]) {
      expect(m.initialInputs.filter((f) => f.includes('node_modules/lru-cache/'))).toEqual([]);
      expect(m.initialInputs.filter((f) => f.includes('node_modules/graphql/'))).toEqual([]);
    }
    expect(gql.total).toBeGreaterThan(gql.initial); // the printer is there, in a chunk of its own
  });
});
