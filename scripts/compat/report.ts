/**
 * The gate's one report: every breaking change of every kind, grouped by kind and then
 * by group (REST version, channels or payloads, ...), one line each, and each line
 * self-contained (`openapi: GET /v2/orders/{orderId}: removed ...`) so a line pasted
 * into a review or grepped from CI still says what broke where.
 */
import { KINDS, type Finding, type KindResult } from './types';

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** `openapi: GET /v1/orders: removed the required property ...` */
export function formatFinding(f: Finding): string {
  return `${f.kind}: ${f.location}: ${f.message}${f.rule ? ` [${f.rule}]` : ''}`;
}

/** One line per kind: `openapi: compatible (58 operations; ...)` or `openapi: 3 breaking changes`. */
export function summaryLine(r: KindResult): string {
  const notes = r.notes.length ? `; ${plural(r.notes.length, 'note')}` : '';
  return r.findings.length === 0 ? `${r.kind}: compatible (${r.checked}${notes})` : `${r.kind}: ${plural(r.findings.length, 'breaking change')} (${r.checked}${notes})`;
}

export function formatReport(results: KindResult[], releasedLabel = 'contracts/released/'): string {
  const ordered = [...results].sort((a, b) => KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind));
  const total = ordered.reduce((n, r) => n + r.findings.length, 0);
  const lines: string[] = [];
  if (total === 0) {
    lines.push(`compat: compatible with ${releasedLabel}`);
    for (const r of ordered) lines.push(`  ${summaryLine(r)}`);
  } else {
    lines.push(`compat: ${plural(total, 'breaking change')} against ${releasedLabel}`, '');
    for (const r of ordered) {
      lines.push(summaryLine(r));
      const groups = new Map<string, Finding[]>();
      for (const f of r.findings) groups.set(f.group ?? '', [...(groups.get(f.group ?? '') ?? []), f]);
      for (const [group, findings] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
        const indent = group ? '    ' : '  ';
        if (group) lines.push(`  ${group} (${findings.length})`);
        for (const f of findings) lines.push(`${indent}${formatFinding(f)}`);
      }
      lines.push('');
    }
    lines.push(
      'Released clients break on each line above. Restore the released shape, or ship the change as a new version',
      '(README "Versioning workflow"); a reviewed DANGEROUS GraphQL change can be listed in contracts/compat-accepted.yaml.',
    );
  }
  const notes = ordered.flatMap((r) => r.notes);
  if (notes.length > 0) lines.push('', 'Notes (not failing):', ...notes.map((n) => `  ${n}`));
  return lines.join('\n');
}
