/**
 * The one BENCHMARKS.md writer of the benches (bench/run.ts, bench/realtime.ts,
 * bench/scaleout.ts): the machine line every result carries, table cells, and the two
 * ways a bench updates the file — rows keyed by scenario inside a marked table, or a
 * whole `## <Heading>` section replaced — so each bench touches only its own part.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { root } from './server';

export const BENCHMARKS_FILE = join(root, 'BENCHMARKS.md');

/** Date, CPU model, cores, memory and Node version: the line each result is read against. */
export function environment(): string {
  const cpu = cpus();
  return `${new Date().toISOString().slice(0, 10)}, ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/** A markdown table cell: pipes escaped. */
export const cell = (s: string) => s.replace(/\|/g, '\\|');

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The scenario key of a table row (`| <scenario> | ...`), or undefined for other lines. */
export const scenarioOf = (l: string): string | undefined => /^\| ([a-z0-9-]+) \|/.exec(l)?.[1];

/** Replaces each row's line (keyed by its scenario), or adds it before `marker`. */
export function upsertRows(text: string, rows: { scenario: string; line: string }[], marker: string): string {
  if (!text.includes(marker)) throw new Error(`BENCHMARKS.md has no ${marker} marker`);
  for (const r of rows) {
    const re = new RegExp(`^\\| ${escapeRe(r.scenario)} \\|.*$`, 'm');
    text = re.test(text) ? text.replace(re, () => r.line) : text.replace(marker, () => `${r.line}\n${marker}`);
  }
  return text;
}

/** The `## <heading>` section's text (without its heading line), or undefined. */
export function sectionOf(text: string, heading: string): string | undefined {
  const start = text.search(new RegExp(`^## ${escapeRe(heading)}\\s*$`, 'm'));
  if (start < 0) return undefined;
  const rest = text.slice(start + `## ${heading}`.length);
  const next = rest.search(/^## /m);
  return next >= 0 ? rest.slice(0, next) : rest;
}

/** Replaces the `## <heading>` section by `body` (which starts with its heading), or appends it. */
export function replaceSection(text: string, heading: string, body: string): string {
  const start = text.search(new RegExp(`^## ${escapeRe(heading)}\\s*$`, 'm'));
  if (start < 0) return `${text.trimEnd()}\n\n${body}`;
  const rest = text.slice(start + `## ${heading}`.length);
  const next = rest.search(/^## /m);
  const before = text.slice(0, start);
  const head = before === '' || before.endsWith('\n\n') ? before : before.endsWith('\n') ? `${before}\n` : `${before}\n\n`;
  return head + body + (next >= 0 ? `\n${rest.slice(next)}` : '');
}

/**
 * Replaces what lies between two marker lines (the markers stay), so a bench owns one part
 * of a section and leaves the prose around it alone. Throws when the markers are missing:
 * a --write must not silently write nothing.
 */
export function replaceBetween(text: string, start: string, end: string, body: string): string {
  const a = text.indexOf(start);
  const b = text.indexOf(end, a + start.length);
  if (a < 0 || b < 0) throw new Error(`BENCHMARKS.md has no ${start} ... ${end} part`);
  return `${text.slice(0, a + start.length)}\n${body}\n${text.slice(b)}`;
}

/** Reads BENCHMARKS.md, applies `edit`, writes it back. */
export function editBenchmarks(edit: (text: string) => string): void {
  writeFileSync(BENCHMARKS_FILE, edit(readFileSync(BENCHMARKS_FILE, 'utf8')));
}
