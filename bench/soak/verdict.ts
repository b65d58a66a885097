/** The soak's targets, each met or missed with its number; pure, so the tests pin the rules. */
import type { SeqCounts } from './seqs';
import { levelOf, slopePer10Min, type Sample } from './trend';

export interface Target {
  name: string;
  /** What was measured, as printed. */
  value: string;
  /** The target, as printed. */
  goal: string;
  /** undefined: not measured (e.g. no heap figures). */
  met: boolean | undefined;
}

const MB = 1024 * 1024;
const mb = (b: number) => `${(b / MB).toFixed(2)} MB`;

export interface MemoryWindow {
  /** Seconds: the trend is fitted over [from, to] (after warm-up, while the load runs). */
  from: number;
  to: number;
  /** Seconds: the "after" level is the median of the samples in [afterFrom, afterTo] (load stopped, subscribers closed). */
  afterFrom: number;
  afterTo: number;
  /** Open fds before any subscriber or load. */
  idleFds: number;
  slopeLimitMb: number;
  returnPct: number;
}

/**
 * Memory of one server process: no growth trend after warm-up (least-squares slope under
 * the limit per 10 minutes, RSS and heap), back within `returnPct` of the warm level (the
 * level of the first minute after warm-up) once the load stopped, fds back to the idle count.
 */
export function memoryTargets(label: string, samples: Sample[], w: MemoryWindow): Target[] {
  const out: Target[] = [];
  const limit = w.slopeLimitMb * MB;
  for (const field of ['rss', 'heap'] as const) {
    const name = field === 'rss' ? 'RSS' : 'heap used';
    const during = samples.filter((s) => s.t >= w.from && s.t <= w.to);
    const s = slopePer10Min(during, field, w.from);
    out.push({
      name: `${label}: ${name} trend after warm-up`,
      value: Number.isNaN(s) ? 'not measured' : `${s >= 0 ? '+' : ''}${mb(s)} per 10 min (${during.filter((x) => x[field] !== undefined).length} samples over ${Math.round(w.to - w.from)} s)`,
      goal: `slope < ${w.slopeLimitMb} MB per 10 min`,
      met: Number.isNaN(s) ? undefined : s < limit,
    });
    const warm = levelOf(samples, field, w.from, w.from + 60);
    const after = levelOf(samples, field, w.afterFrom, w.afterTo);
    const known = !Number.isNaN(warm) && !Number.isNaN(after);
    out.push({
      name: `${label}: ${name} after the load stopped`,
      value: known ? `${mb(after)} vs warm ${mb(warm)} (${after >= warm ? '+' : ''}${(((after - warm) / warm) * 100).toFixed(1)} %)` : 'not measured',
      goal: `within ${w.returnPct} % of the warm level`,
      met: known ? after <= warm * (1 + w.returnPct / 100) : undefined,
    });
  }
  const last = [...samples].reverse().find((s) => s.t >= w.afterFrom && s.t <= w.afterTo);
  out.push({
    name: `${label}: file descriptors after the load stopped`,
    value: last ? `${last.fds} (idle ${w.idleFds})` : 'not measured',
    goal: 'back to the idle count',
    met: last ? last.fds <= w.idleFds : undefined,
  });
  return out;
}

export interface StreamOutcome {
  counts: SeqCounts & { subscribers: number };
  /** Subscribers whose last seq is not their order's final revision. */
  behind: number;
  /** Messages no rule covers. */
  unknown: number;
}

/** Every subscriber: nothing lost, nothing duplicated, at its order's final revision, no contract breach. */
export function streamTargets(o: StreamOutcome): Target[] {
  const c = o.counts;
  return [
    { name: 'events lost', value: `${c.lost} (of ${c.delivered} delivered; ${c.gaps} gaps, ${c.outOfOrder} out of order)`, goal: '0', met: c.lost === 0 },
    { name: 'events duplicated', value: String(c.duplicates), goal: '0', met: c.duplicates === 0 },
    { name: "subscribers not at their order's final revision", value: `${o.behind} of ${c.subscribers}`, goal: '0', met: o.behind === 0 },
    { name: 'contract breaches seen by subscribers', value: `${c.violations} (plus ${o.unknown} unknown messages)`, goal: '0', met: c.violations === 0 && o.unknown === 0 },
  ];
}

/** Statuses >= 500 summed over the request kinds. */
export const count5xx = (statuses: Record<string, number>[]): number => statuses.reduce((s, m) => s + Object.entries(m).reduce((a, [k, v]) => a + (Number(k) >= 500 ? v : 0), 0), 0);

export const outcomeOf = (t: Target) => (t.met === undefined ? 'not measured' : t.met ? 'met' : 'MISSED');

/** One line per target. */
export const renderTargets = (ts: Target[]): string[] => ts.map((t) => `- ${t.name}: **${outcomeOf(t)}** — ${t.value} (target ${t.goal})`);

/** The run passes when no target was missed (targets not measured are reported, not failed). */
export const passed = (ts: Target[]): boolean => ts.every((t) => t.met !== false);
