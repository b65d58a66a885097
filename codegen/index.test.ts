/**
 * Codegen runs as the CLI (`tsx codegen/index.ts --out <dir>`), as CI runs it: twice
 * into fresh directories, and both trees must equal the committed generated/ byte for
 * byte. So a hand edit under generated/, a stale file, or non-determinism fails here.
 * (In-process would be faster, but openapi-typescript loads an ESM-only dependency
 * that Node 20 can require and jest's module system cannot.)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createHash } from 'node:crypto';

const root = join(__dirname, '..');
const walk = (dir: string): string[] => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));
// generated/ and the SDK package's contract-derived part (sdk/src/generated/).
const tree = (dir: string): Record<string, string> => Object.fromEntries(['generated', 'sdk/src/generated'].flatMap((d) => walk(join(dir, d))).map((p) => [relative(dir, p), readFileSync(p, 'utf8')]));

function runCodegen(): Record<string, string> {
  const out = mkdtempSync(join(tmpdir(), 'orderline-codegen-'));
  try {
    execFileSync(process.execPath, ['--require', 'tsx/cjs', join(root, 'codegen/index.ts'), '--out', out], { cwd: root, encoding: 'utf8' });
    return tree(out);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

describe('codegen', () => {
  let first: Record<string, string>;
  beforeAll(() => {
    first = runCodegen();
  }, 180_000); // a generous guard: the docs pages (three Redoc renders) take most of a run on a busy machine

  it('is deterministic: two runs give the same bytes', () => {
    expect(runCodegen()).toEqual(first);
  }, 180_000); // a generous guard: the docs pages (three Redoc renders) take most of a run on a busy machine

  it('matches the committed generated/ exactly (a hand edit or a stale file fails here and in CI)', () => {
    const committed = tree(root);
    expect(Object.keys(committed).sort()).toEqual(Object.keys(first).sort());
    for (const [rel, text] of Object.entries(first)) expect({ file: rel, same: committed[rel] === text }).toEqual({ file: rel, same: true });
  });

  it('marks an operation that reads deprecated schema @deprecated in the SDK types, naming the field', () => {
    const sdkTypes = first['sdk/src/generated/persisted.ts'];
    const docOf = (name: string) => new RegExp(`/\\*\\* @deprecated ([^\\n]*) \\*/\\n  ${name}: `).exec(sdkTypes)?.[1];
    expect(docOf('ViewerOrders')).toContain('Order.totalCents is deprecated');
    expect(docOf('ViewerOrdersV2')).toBeUndefined();
    expect(sdkTypes).toContain("\n  ViewerOrdersV2: { kind: 'query'; result");
  });

  it('hashes persisted operations as plain hex SHA-256 of the text sent', () => {
    const manifest = JSON.parse(first['generated/graphql/persisted.json']) as Record<string, string>;
    expect(Object.keys(manifest).length).toBeGreaterThan(0);
    for (const [hash, text] of Object.entries(manifest)) {
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      expect(createHash('sha256').update(text, 'utf8').digest('hex')).toBe(hash);
    }
  });
});
