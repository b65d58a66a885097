/**
 * The gate's report where CI users read it, one breaking change (causes.ts) per entry:
 *
 * - GitHub annotations (`::error file=...,line=...,title=...::...`, printed when
 *   `GITHUB_ACTIONS=true`): shown on the contract's line in the pull request;
 * - a Markdown summary (appended to the file `GITHUB_STEP_SUMMARY` names);
 * - JUnit XML (written to the file `COMPAT_JUNIT` names): one test case per contract kind
 *   that passed and one failing test case per breaking change, for any CI's test view.
 *
 * Each entry names the contract, the node (JSON pointer), the rules, and every released
 * operation, media type or message it breaks. Formats: GitHub's workflow commands
 * (escaping as its toolkit's `command.ts` does) and the JUnit XML schema Jenkins and GitLab
 * read; both written here because each is a few lines and no maintained library does
 * either without pulling in a framework.
 */
import { KINDS, type KindResult } from './types';
import { causePlace, formatFinding, groupByCause, summaryLine, type Cause } from './report';

/** The line of a cause in its (current) contract file, for annotations; undefined: the file as a whole. */
export type LineOf = (contract: string, pointer: string) => number | undefined;

const escapeData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escapeProperty = (s: string) => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
const plain = (s: string) => s.replace(/`/g, '');

/** At most this many findings are spelled out in one annotation; the summary has them all. */
export const ANNOTATION_LINES = 10;

export function githubAnnotations(results: KindResult[], lineOf: LineOf): string[] {
  return groupByCause(results).map((c) => {
    const line = c.contract && c.pointer !== undefined ? lineOf(c.contract, c.pointer) : undefined;
    const props = [c.contract ? `file=${escapeProperty(c.contract)}` : undefined, line ? `line=${line}` : undefined, `title=${escapeProperty(`compat: ${plain(c.title)}`)}`].filter(Boolean).join(',');
    const listed = c.findings.slice(0, ANNOTATION_LINES).map((f) => `- ${formatFinding(f)}`);
    const more = c.findings.length > ANNOTATION_LINES ? [`- ... and ${c.findings.length - ANNOTATION_LINES} more (see the job summary)`] : [];
    const body = [`${plain(c.title)}${c.rules.length ? ` [${c.rules.join(', ')}]` : ''} breaks ${c.findings.length} released operation(s), media type(s) or message(s):`, ...listed, ...more].join('\n');
    return `::error ${props}::${escapeData(body)}`;
  });
}

const md = (s: string) => s.replace(/\|/g, '\\|').replace(/</g, '&lt;');

export function markdownSummary(results: KindResult[]): string {
  const ordered = [...results].sort((a, b) => KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind));
  const causes = groupByCause(ordered);
  const lines = [causes.length === 0 ? '## Compatibility gate: compatible' : `## Compatibility gate: ${causes.length} breaking change${causes.length === 1 ? '' : 's'}`, '', '| contract kind | result |', '|---|---|'];
  for (const r of ordered) lines.push(`| ${r.kind} | ${md(summaryLine(r).slice(r.kind.length + 2))} |`);
  for (const c of causes) {
    lines.push('', `### ${md(c.title)}`, '');
    const place = causePlace(c);
    if (place) lines.push(`In \`${place}\`${c.rules.length ? `; rule ${c.rules.map((r) => `\`${r}\``).join(', ')}` : ''}. It breaks:`, '');
    for (const f of c.findings) lines.push(`- ${f.group ? `${md(f.group)}: ` : ''}**${md(f.location)}**: ${md(f.message)}`);
  }
  const notes = ordered.flatMap((r) => r.notes);
  if (notes.length > 0) lines.push('', '<details><summary>Notes (not failing)</summary>', '', ...notes.map((n) => `- ${md(n)}`), '', '</details>');
  return `${lines.join('\n')}\n`;
}

const xml = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    // XML 1.0 forbids most control characters even escaped.
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');

function failingCase(c: Cause): string {
  const classname = c.contract ?? `compat.${c.findings[0].kind}`;
  const body = [causePlace(c), ...c.findings.map(formatFinding)].filter(Boolean).join('\n');
  return `    <testcase classname="${xml(classname)}" name="${xml(c.title)}"><failure message="${xml(`${c.title}: breaks ${c.findings.length}`)}" type="${xml(c.rules.join(' ') || 'breaking')}">${xml(body)}</failure></testcase>`;
}

export function junitXml(results: KindResult[]): string {
  const ordered = [...results].sort((a, b) => KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind));
  const causes = groupByCause(ordered);
  const passing = ordered.filter((r) => r.findings.length === 0).map((r) => `    <testcase classname="compat.${r.kind}" name="${xml(summaryLine(r))}"/>`);
  const tests = passing.length + causes.length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="compat" tests="${tests}" failures="${causes.length}">`,
    `  <testsuite name="compatibility gate: contracts/ against contracts/released/" tests="${tests}" failures="${causes.length}" errors="0" skipped="0">`,
    ...passing,
    ...causes.map(failingCase),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
