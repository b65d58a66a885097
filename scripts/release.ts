/**
 * `npm run release`: snapshots the current contracts into contracts/released/, the
 * baseline the compatibility gate compares against. Run it when a version ships;
 * commit the snapshot with the release.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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
  for (const f of readdirSync(join(src, 'operations'))
    .filter((n) => n.endsWith('.graphql'))
    .sort()) {
    cpSync(join(src, 'operations', f), join(dest, 'operations', f));
    written.push(`contracts/released/operations/${f}`);
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
