import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { generateAll } from './index';

const root = join(__dirname, '..');
const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));

describe('codegen', () => {
  let first: Record<string, string>;
  beforeAll(async () => {
    first = await generateAll(root);
  }, 60_000);

  it('is deterministic: two runs give the same bytes', async () => {
    expect(await generateAll(root)).toEqual(first);
  }, 60_000);

  it('matches the committed generated/ exactly (a hand edit or a stale file fails here and in CI)', () => {
    for (const [rel, text] of Object.entries(first)) {
      expect(existsSync(join(root, rel))).toBe(true);
      expect({ file: rel, same: readFileSync(join(root, rel), 'utf8') === text }).toEqual({ file: rel, same: true });
    }
    const extra = walk(join(root, 'generated')).map((p) => relative(root, p)).filter((p) => !(p in first));
    expect(extra).toEqual([]);
  });

  it('hashes persisted operations as plain hex SHA-256 of the text sent', async () => {
    const { persistedOperations } = await import('../generated/graphql/persisted');
    const { createHash } = await import('node:crypto');
    for (const op of Object.values(persistedOperations)) {
      expect(op.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(createHash('sha256').update(op.text).digest('hex')).toBe(op.hash);
    }
  });
});
