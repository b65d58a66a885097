/**
 * `npm run release`: snapshots the current contracts into contracts/released/, the
 * baseline the compatibility gate compares against. Run it when a version ships;
 * commit the snapshot with the release.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const CONTRACT_FILES = ['openapi.yaml', 'asyncapi.yaml', 'schema.graphql'] as const;

export function release(root: string): string[] {
  const src = join(root, 'contracts');
  const dest = join(src, 'released');
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
  const files = release(join(__dirname, '..'));
  console.log(`released ${files.length} contract files into contracts/released/`);
}
