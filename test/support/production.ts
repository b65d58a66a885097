/**
 * A production install in a temporary directory, as `npm run build` + `npm ci --omit=dev`
 * leave it: src/ and generated/ compiled to JavaScript (TypeScript's own transpiler; the
 * project is `isolatedModules`, so per-file output is what tsc emits), and a Node preload that
 * refuses to load any devDependency (tsx, typescript, jest...), so a command that still needs
 * one fails here as it would on the server.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import ts from 'typescript';

const root = join(__dirname, '..', '..');

const walk = (dir: string): string[] => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));

export interface ProductionInstall {
  dir: string;
  /** Runs `node <dir>/dist/<script>` with `args` and `env` added to a minimal environment. */
  run(script: string, args: string[], env: Record<string, string | undefined>): { status: number | null; stdout: string; stderr: string };
  remove(): void;
}

export function productionInstall(): ProductionInstall {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-prod-'));
  const config = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')) as { compilerOptions: Record<string, unknown> };
  const { options } = ts.convertCompilerOptionsFromJson({ ...config.compilerOptions, sourceMap: false }, root);
  for (const top of ['src', 'generated']) {
    for (const file of walk(join(root, top))) {
      const rel = relative(root, file);
      const out = join(dir, 'dist', rel);
      mkdirSync(dirname(out), { recursive: true });
      if (file.endsWith('.json')) copyFileSync(file, out);
      if (!file.endsWith('.ts') || /\.(test|contract)\.ts$/.test(file)) continue;
      const js = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions: options, fileName: file }).outputText;
      writeFileSync(out.replace(/\.ts$/, '.js'), js);
    }
  }
  copyFileSync(join(root, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const dev = Object.keys((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies);
  writeFileSync(
    join(dir, 'no-dev-dependencies.js'),
    `const Module = require('module');
const dev = new Set(${JSON.stringify(dev)});
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const name = request.startsWith('@') ? request.split('/').slice(0, 2).join('/') : request.split('/')[0];
  if (dev.has(name)) throw new Error('production install: devDependency ' + name + ' is not installed');
  return resolve.call(this, request, ...rest);
};
`,
  );
  return {
    dir,
    run(script, args, env) {
      const r = spawnSync(process.execPath, ['--require', join(dir, 'no-dev-dependencies.js'), join(dir, 'dist', script), ...args], {
        cwd: dir,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', ...env },
        timeout: 60_000,
      });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
