/**
 * The generated `Handlers` interface is what makes the contract binding: this test
 * deletes one handler binding from a copy of src/ and shows `tsc` refuses it, naming
 * the operation.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..');

function typecheckCopy(mutate: (dir: string) => void): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-tc-'));
  try {
    cpSync(join(root, 'src'), join(dir, 'src'), { recursive: true });
    cpSync(join(root, 'generated'), join(dir, 'generated'), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    const base = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ ...base, include: ['src', 'generated'], exclude: ['**/*.test.ts'] }));
    mutate(dir);
    try {
      execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir, '--noEmit'], { encoding: 'utf8' });
      return { ok: true, output: '' };
    } catch (err) {
      return { ok: false, output: String((err as { stdout?: string }).stdout) };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('generated handler types', () => {
  it('make tsc fail when one handler is deleted', () => {
    const result = typecheckCopy((dir) => {
      const file = join(dir, 'src/http/rest/handlers.ts');
      const text = readFileSync(file, 'utf8');
      const mutated = text.replace('getOrder: bind(n.get), ', '');
      expect(mutated).not.toBe(text);
      writeFileSync(file, mutated);
    });
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/getOrder/);
  }, 120_000);

  it('accept the unmodified source (the control)', () => {
    const result = typecheckCopy(() => undefined);
    expect(result).toEqual({ ok: true, output: '' });
  }, 120_000);
});
