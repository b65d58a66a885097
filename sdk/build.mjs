// Builds @orderline/sdk with the TypeScript compiler, twice: ES modules into dist/esm and
// CommonJS into dist/cjs, each with its .d.ts beside it and a package.json naming its
// module system, so Node and TypeScript (NodeNext, Bundler, Node10) read each half as
// what it is. tsc rather than a bundler: a library's consumers bundle it themselves
// (sideEffects: false lets them drop what they do not import), the declarations come
// from the same compiler that checks the source, and no new build dependency is needed.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync(join(here, 'dist'), { recursive: true, force: true });

const builds = [
  { out: 'dist/esm', type: 'module', flags: ['--module', 'ES2022', '--moduleResolution', 'Bundler'] },
  // verbatimModuleSyntax forbids `import` in a CommonJS output; the ESM build keeps checking it.
  { out: 'dist/cjs', type: 'commonjs', flags: ['--module', 'CommonJS', '--moduleResolution', 'Node10', '--verbatimModuleSyntax', 'false'] },
];
for (const b of builds) {
  execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.build.json'), '--outDir', join(here, b.out), ...b.flags], { stdio: 'inherit' });
  mkdirSync(join(here, b.out), { recursive: true });
  writeFileSync(join(here, b.out, 'package.json'), `${JSON.stringify({ type: b.type })}\n`);
}
