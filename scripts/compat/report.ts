/**
 * The gate's one report. Findings are grouped by their cause (causes.ts): removing one
 * property of a shared schema is one breaking change, printed once, with every operation,
 * media type and message it breaks listed under it. Each listed line is self-contained
 * (`openapi: GET /v2/orders/{orderId}: removed ...`) so a line pasted into a review or
 * grepped from CI still says what broke where; ci.ts writes the same groups as GitHub
 * annotations, a Markdown summary and JUnit XML.
 */
import { KINDS, type Finding, type KindResult } from './types';

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** One breaking change: its cause, where it is, and every finding it produces. */
export interface Cause {
  /** "`OrderV2.note` removed", or the finding's own line when nothing else shares its cause. */
  title: string;
  contract?: string;
  pointer?: string;
  /** The distinct rule ids of its findings. */
  rules: string[];
  findings: Finding[];
}

/** `openapi: GET /v1/orders: removed the required property ...` */
export function formatFinding(f: Finding): string {
  return `${f.kind}: ${f.location}: ${f.message}${f.rule ? ` [${f.rule}]` : ''}`;
}

/** Groups findings by cause, in the order their first finding comes (kind order, then each check's order). */
export function groupByCause(results: KindResult[]): Cause[] {
  const ordered = [...results].sort((a, b) => KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind));
  const causes = new Map<string, Cause>();
  for (const f of ordered.flatMap((r) => r.findings)) {
    const key = f.cause === undefined ? `finding\u0000${formatFinding(f)}` : `cause\u0000${f.contract ?? ''}\u0000${f.pointer ?? ''}\u0000${f.cause}`;
    let cause = causes.get(key);
    if (!cause) {
      cause = { title: f.cause ?? `${f.location}: ${f.message}`, ...(f.contract ? { contract: f.contract } : {}), ...(f.pointer !== undefined ? { pointer: f.pointer } : {}), rules: [], findings: [] };
      causes.set(key, cause);
    }
    cause.findings.push(f);
    if (f.rule && !cause.rules.includes(f.rule)) cause.rules.push(f.rule);
  }
  return [...causes.values()];
}

/** One line per kind: `openapi: compatible (58 operations; ...)` or `openapi: 24 findings (...)`. */
export function summaryLine(r: KindResult): string {
  const notes = r.notes.length ? `; ${plural(r.notes.length, 'note')}` : '';
  return r.findings.length === 0 ? `${r.kind}: compatible (${r.checked}${notes})` : `${r.kind}: ${plural(r.findings.length, 'finding')} (${r.checked}${notes})`;
}

/** `contracts/openapi.yaml /components/schemas/OrderV2/properties/note` */
export const causePlace = (c: Pick<Cause, 'contract' | 'pointer'>) => [c.contract, c.pointer].filter((s) => s !== undefined && s !== '').join(' ');

/** What a cause breaks, as one line under it: the finding with its group (`REST v2`, `message payloads`). */
const breakLine = (f: Finding) => `${f.group ? `${f.group}: ` : ''}${formatFinding(f)}`;

/** What to do instead, for the kinds that have findings (each kind's way out differs). */
function advice(results: KindResult[]): string[] {
  const failing = new Set(results.filter((r) => r.findings.length > 0).map((r) => r.kind));
  const out: string[] = [];
  if (failing.has('openapi')) out.push('  REST: serve the change as a new version (README "Versioning workflow"), or ship it as a deliberate release (npm run release in the same change)');
  if (failing.has('asyncapi')) out.push('  realtime: add a new message, field or channel beside the released one, or ship the change as a deliberate release');
  if (failing.has('graphql')) out.push('  GraphQL: add a new field or type and deprecate the old one; a reviewed DANGEROUS change can be listed in contracts/compat-accepted.yaml (BREAKING ones cannot)');
  if (failing.has('operations')) out.push('  persisted operations: keep the released file as it is and add the new text as a new operation (a new name, so a new hash)');
  return out;
}

export function formatReport(results: KindResult[], releasedLabel = 'contracts/released/'): string {
  const ordered = [...results].sort((a, b) => KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind));
  const total = ordered.reduce((n, r) => n + r.findings.length, 0);
  const lines: string[] = [];
  if (total === 0) {
    lines.push(`compat: compatible with ${releasedLabel}`);
    for (const r of ordered) lines.push(`  ${summaryLine(r)}`);
  } else {
    const causes = groupByCause(ordered);
    lines.push(`compat: ${plural(causes.length, 'breaking change')} against ${releasedLabel} (${plural(total, 'finding')})`);
    for (const r of ordered) lines.push(`  ${summaryLine(r)}`);
    causes.forEach((c, i) => {
      const place = causePlace(c);
      lines.push('', `${i + 1}. ${c.title}${place ? ` (${place})` : ''}`, `   what it breaks (${c.findings.length}):`);
      for (const f of c.findings) lines.push(`     ${breakLine(f)}`);
    });
    lines.push('', 'Released clients break on each line above. Restore the released shape, or:', ...advice(ordered));
  }
  const notes = ordered.flatMap((r) => r.notes);
  if (notes.length > 0) lines.push('', 'Notes (not failing):', ...notes.map((n) => `  ${n}`));
  return lines.join('\n');
}
