/**
 * A client team's project outside the repo with @orderline/sdk installed from its
 * tarball: what the consumer test and the README snippet test type-check and run.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestServer } from '../support/server';

const REPO = join(__dirname, '../..');
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');

/** The compiler options client teams use; no DOM lib, so the SDK's types must hold in plain Node. */
export const CLIENT_COMPILER_OPTIONS = {
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  lib: ['ES2022'],
  types: ['node'],
  strict: true,
  verbatimModuleSyntax: true,
  exactOptionalPropertyTypes: true,
  skipLibCheck: false,
  outDir: 'dist',
  rootDir: '.',
};

export interface Tarball {
  file: string;
  size: number;
  unpackedSize: number;
  files: string[];
}
export interface InstalledPackage {
  name: string;
  version: string;
  hasInstallScript: boolean;
}
export interface ConsumerProject {
  dir: string;
  tarball: Tarball;
  /** Every package the tarball's install put into node_modules (before any dev tooling). */
  installed: InstalledPackage[];
  addDevDependencies(specs: string[]): void;
  /** tsc over `files` with CLIENT_COMPILER_OPTIONS (and `overrides`), emitting into dist/: '' when clean, else the diagnostics. */
  typecheck(files: string[], overrides?: Record<string, unknown>): string;
  dispose(): void;
}

/** npm's own environment variables of the jest run (workspace, prefix...) must not steer the client's npm. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
}

function npm(args: string[], cwd: string): string {
  try {
    return execFileSync('npm', args, { cwd, env: cleanEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string };
    throw new Error(`npm ${args.join(' ')} failed in ${cwd} (the npm registry or a warm npm cache is needed):\n${e.stderr ?? ''}${e.stdout ?? ''}`, { cause: err });
  }
}

export function consumerProject(): ConsumerProject {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-consumer-'));
  // prepack builds dist/ (ESM + CJS + .d.ts) first.
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], join(REPO, 'sdk'))) as { filename: string; size: number; unpackedSize: number; files: { path: string }[] }[];
  const p = packed[0];
  const tarball: Tarball = { file: join(dir, p.filename), size: p.size, unpackedSize: p.unpackedSize, files: p.files.map((f) => f.path) };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'orderline-consumer', version: '1.0.0', private: true }, null, 2)}\n`);
  npm(['install', tarball.file, '--no-audit', '--no-fund', '--prefer-offline'], dir);
  const lock = JSON.parse(readFileSync(join(dir, 'node_modules/.package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; hasInstallScript?: boolean }> };
  const installed = Object.entries(lock.packages)
    .filter(([k]) => k.startsWith('node_modules/'))
    .map(([k, v]) => ({ name: k.slice(k.lastIndexOf('node_modules/') + 'node_modules/'.length), version: v.version ?? '', hasInstallScript: v.hasInstallScript === true }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return {
    dir,
    tarball,
    installed,
    addDevDependencies(specs) {
      npm(['install', '--save-dev', ...specs, '--no-audit', '--no-fund', '--prefer-offline'], dir);
    },
    typecheck(files, overrides = {}) {
      writeFileSync(join(dir, 'tsconfig.json'), `${JSON.stringify({ compilerOptions: { ...CLIENT_COMPILER_OPTIONS, ...overrides }, files }, null, 2)}\n`);
      try {
        execFileSync(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
        return '';
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string };
        return `${e.stdout ?? ''}${e.stderr ?? ''}` || 'tsc failed';
      }
    },
    dispose() {
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The CommonJS spelling of an ES module consumer: under verbatimModuleSyntax a CommonJS
 * file imports with `import x = require('...')`; everything else is the same text.
 */
export function toCommonJs(source: string): string {
  return source.replace(/^import \* as (\w+) from '([^']+)';$/gm, "import $1 = require('$2');").replace(/^import (\w+) from '([^']+)';$/gm, "import $1 = require('$2');");
}

/** Runs a compiled consumer; when it prints DROP, the server drops every stream and it is told DROPPED. */
export function runWithDrops(file: string, server: TestServer, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], {
      cwd: join(file, '..', '..'),
      env: { PATH: process.env.PATH ?? '', ORDERLINE_URL: server.url, ORDERLINE_TOKEN: server.alice.token, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (/^DROP$/m.test(d)) {
        server.realtime.dropConnections();
        child.stdin.write('DROPPED\n');
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
