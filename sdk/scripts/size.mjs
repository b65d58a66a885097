// Measures what @orderline/sdk costs a client team: packed size (npm pack), and for each
// entry the browser bundle an app would ship if it imported all of that entry (esbuild,
// ESM, minified, dependencies included, then gzip -9). Build first (npm run build -w
// @orderline/sdk). Run: node sdk/scripts/size.mjs
import { execFileSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const sdk = join(dirname(fileURLToPath(import.meta.url)), '..');
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: sdk, env, encoding: 'utf8' }));
console.log(`packed: ${pack.size} B (${pack.unpackedSize} B unpacked, ${pack.entryCount} files)`);
console.log('| entry | min | min+gzip |');
console.log('|---|---|---|');
for (const entry of ['index', 'rest', 'graphql', 'realtime']) {
  const out = await build({
    entryPoints: [join(sdk, 'dist/esm', `${entry}.js`)],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
  });
  const code = out.outputFiles[0].contents;
  const name = entry === 'index' ? '@orderline/sdk' : `@orderline/sdk/${entry}`;
  console.log(`| ${name} | ${code.length} B | ${gzipSync(code, { level: 9 }).length} B |`);
}
