/**
 * `npm run release`: snapshots the current contracts into contracts/released/, the
 * baseline the compatibility gate compares against. Run it when a version ships;
 * commit the snapshot with the release.
 *
 * It refuses (exit 2, nothing written) a release that would ship a changed
 * `openapi.yaml` or `asyncapi.yaml` under the `info.version` already released, or under
 * a lower one: clients and the SDK's changelog tell releases apart by that version.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';

export const CONTRACT_FILES = ['openapi.yaml', 'asyncapi.yaml', 'schema.graphql'] as const;

/** The versioned documents: each carries `info.version` (semver). */
const VERSIONED = ['openapi.yaml', 'asyncapi.yaml'] as const;

/** A release the snapshot must not record, named in words. */
export class ReleaseRefused extends Error {}

function versionOf(file: string): [number, number, number] {
  const doc: unknown = parse(readFileSync(file, 'utf8'));
  const info = typeof doc === 'object' && doc !== null && 'info' in doc ? doc.info : undefined;
  const version = typeof info === 'object' && info !== null && 'version' in info ? info.version : undefined;
  const m = typeof version === 'string' ? /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/.exec(version) : null;
  if (!m) throw new ReleaseRefused(`${file}: info.version must be a version like 1.2.3, found ${JSON.stringify(version)}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

/** Compares two versions: negative, zero or positive. */
const compare = (a: readonly number[], b: readonly number[]): number => a.reduce((d, x, i) => d || x - (b[i] ?? 0), 0);

/** Each versioned document that changed since the last release must carry a higher `info.version`. */
export function checkVersions(src: string, dest: string): void {
  const problems: string[] = [];
  for (const f of VERSIONED) {
    const current = join(src, f);
    const released = join(dest, f);
    if (!existsSync(current) || !existsSync(released)) continue;
    const [now, then] = [versionOf(current), versionOf(released)];
    const changed = readFileSync(current, 'utf8') !== readFileSync(released, 'utf8');
    const order = compare(now, then);
    if (order < 0) problems.push(`contracts/${f}: info.version ${now.join('.')} is lower than the released ${then.join('.')}`);
    else if (changed && order === 0)
      problems.push(
        `contracts/${f} changed since release ${then.join('.')} but still says info.version ${now.join('.')}: raise it (major for a break the gate reports, minor for an addition, patch for a fix), run npm run codegen again (the reference pages carry it), then release`,
      );
  }
  if (problems.length > 0) throw new ReleaseRefused(problems.join('; '));
}

export function release(root: string): string[] {
  const src = join(root, 'contracts');
  const dest = join(src, 'released');
  checkVersions(src, dest);
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(join(dest, 'operations'), { recursive: true });
  const written: string[] = [];
  for (const f of CONTRACT_FILES) {
    if (!existsSync(join(src, f))) throw new Error(`contracts/${f} is missing`);
    cpSync(join(src, f), join(dest, f));
    written.push(`contracts/released/${f}`);
  }
  // Ours (operations/*.graphql) and each partner's folder (operations/<client>/*.graphql):
  // released apps send both, so the gate must find both in the baseline.
  const ops = join(src, 'operations');
  for (const entry of readdirSync(ops).sort()) {
    const files = statSync(join(ops, entry)).isDirectory()
      ? readdirSync(join(ops, entry))
          .filter((n) => n.endsWith('.graphql'))
          .sort()
          .map((n) => `${entry}/${n}`)
      : entry.endsWith('.graphql')
        ? [entry]
        : [];
    for (const rel of files) {
      mkdirSync(dirname(join(dest, 'operations', rel)), { recursive: true });
      cpSync(join(ops, rel), join(dest, 'operations', rel));
      written.push(`contracts/released/operations/${rel}`);
    }
  }
  writeFileSync(
    join(dest, 'README.md'),
    '# Released contracts\n\nThe last released contracts, written by `npm run release`. Never edit by hand: the\ncompatibility gate compares `contracts/` against these, so released clients keep working.\n',
  );
  return written;
}

if (require.main === module) {
  try {
    const files = release(join(__dirname, '..'));
    console.log(`released ${files.length} contract files into contracts/released/`);
  } catch (e) {
    if (!(e instanceof ReleaseRefused)) throw e;
    console.error(`release: refused, nothing written: ${e.message}`);
    process.exitCode = 2;
  }
}
