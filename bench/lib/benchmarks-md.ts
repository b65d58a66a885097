/**
 * Replaces what lies between two marker lines of BENCHMARKS.md (the markers stay), so a
 * bench owns one section and leaves the rest of the file alone. Meant as the one writer
 * the other benches can move to (DEBTS.md: three BENCHMARKS.md writers in bench/).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './server';

export function replaceSection(start: string, end: string, lines: readonly string[]): void {
  const file = join(root, 'BENCHMARKS.md');
  const text = readFileSync(file, 'utf8');
  const [a, b] = [text.indexOf(start), text.indexOf(end)];
  if (a < 0 || b < a) throw new Error(`BENCHMARKS.md has no ${start} ... ${end} section`);
  writeFileSync(file, `${text.slice(0, a + start.length)}\n${lines.join('\n')}\n${text.slice(b)}`);
}
