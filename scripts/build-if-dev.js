/**
 * `prestart` / `pretoken`: compile src/ into dist/ when TypeScript is installed (a checkout
 * with dev dependencies; incremental, so an unchanged tree costs little), and otherwise use the
 * dist/ that was built before a production install (`npm ci --omit=dev` has no tsc).
 */
'use strict';
const { existsSync } = require('node:fs');
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

const root = join(__dirname, '..');
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
} catch {
  tsc = null;
}
if (tsc) {
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
if (!existsSync(join(root, 'dist/src/main.js'))) {
  process.stderr.write('orderline: dist/ is missing and TypeScript is not installed: build where dev dependencies are (npm ci && npm run build), then install for production (npm ci --omit=dev)\n');
  process.exit(1);
}
