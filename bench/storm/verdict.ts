/**
 * The storm's counting and targets, pure so the tests pin the rules: refusals per client,
 * how long until every subscriber is back (and at what rate they were admitted), what the
 * probe and the writers saw while the instance restarted, each target met or missed.
 * Times are Date.now() milliseconds, shared by the bench and its client processes.
 */
import type { Restart } from '../lib/deployment';
import type { Attempt } from '../soak/load';
import type { SeqCounts } from '../soak/seqs';
import type { Target } from '../soak/verdict';
import type { ScenarioName } from './settings';

/** The q-quantile (0..1) of `values` by nearest rank, or NaN when empty. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export interface Refusals {
  /** Subscribers that were dropped by the restart (each one must come back). */
  clients: number;
  /** 503s summed, and per client: mean and max. */
  total: number;
  mean: number;
  max: number;
}

/** `refused`: the 503s each dropped subscriber drew before it was back. */
export function refusalsOf(refused: number[]): Refusals {
  const total = refused.reduce((a, b) => a + b, 0);
  return { clients: refused.length, total, mean: refused.length ? total / refused.length : 0, max: refused.reduce((a, b) => Math.max(a, b), 0) };
}

export interface Admission {
  /** Most subscriptions admitted within any one second. */
  peakPerS: number;
  /** Mean rate while the middle 80 % came back (the 10th to the 90th percentile's time); NaN when that took under a second (a rate of arrivals, not of admissions). */
  meanPerS: number;
}

/** How fast the instance took the subscribers back, from when each one was. */
export function admissionOf(backAt: number[]): Admission {
  if (backAt.length === 0) return { peakPerS: 0, meanPerS: NaN };
  const sorted = [...backAt].sort((a, b) => a - b);
  let peak = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j] - sorted[i] >= 1000) i++;
    peak = Math.max(peak, j - i + 1);
  }
  const lo = quantile(sorted, 0.1);
  const hi = quantile(sorted, 0.9);
  const inside = sorted.filter((t) => t >= lo && t <= hi).length;
  return { peakPerS: peak, meanPerS: hi - lo >= 1000 ? inside / ((hi - lo) / 1000) : NaN };
}

export interface Recovery {
  dropped: number;
  back: number;
  /** When the last one was back, if all were. */
  allBackAt?: number;
  /** Seconds until all were back: from the signal (the kill) and from the new instance answering. NaN when not all were. */
  fromSignalS: number;
  fromListeningS: number;
  /** Half of them, and 99 %, were back this many seconds after the new instance answered. */
  p50FromListeningS: number;
  p99FromListeningS: number;
}

/** `n` subscribers were dropped at `t.signalAt`; `backAt` says when each of those back was. */
export function recoveryOf(n: number, backAt: number[], t: Pick<Restart, 'signalAt' | 'listeningAt'>): Recovery {
  const all = backAt.length >= n && n > 0;
  const last = backAt.reduce((a, b) => Math.max(a, b), 0);
  const since = (from: number) => backAt.map((x) => (x - from) / 1000);
  return {
    dropped: n,
    back: backAt.length,
    allBackAt: all ? last : undefined,
    fromSignalS: all ? (last - t.signalAt) / 1000 : NaN,
    fromListeningS: all ? (last - t.listeningAt) / 1000 : NaN,
    p50FromListeningS: quantile(since(t.listeningAt), 0.5),
    p99FromListeningS: quantile(since(t.listeningAt), 0.99),
  };
}

/** What a request attempt came to: its status, or its failure code (ECONNRESET, ECONNREFUSED, timeout). */
export const outcomeOf = (a: Pick<Attempt, 'status' | 'code'>): string => (a.status !== undefined ? String(a.status) : (a.code ?? 'error'));

/** Attempts that ended in [from, to), counted by outcome. */
export function outcomesBetween(attempts: Attempt[], from: number, to: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of attempts) if (a.doneAt >= from && a.doneAt < to) out[outcomeOf(a)] = (out[outcomeOf(a)] ?? 0) + 1;
  return out;
}

/** Attempts without an answer (any failure code) in a tally of outcomes. */
export const unanswered = (outcomes: Record<string, number>): number => Object.entries(outcomes).reduce((n, [k, v]) => n + (/^\d+$/.test(k) ? 0 : v), 0);

export interface Latency {
  /** Answered requests sent in the window. */
  n: number;
  p50: number;
  p99: number;
  max: number;
  /**
   * Of them, those that went out on a connection they opened (`Attempt.opened`). The probe's
   * agent opens one whenever its kept-alive ones are all busy: a request slower than the
   * probe's interval makes the next one connect, and while the storm fills the listen queue a
   * new connection can wait seconds for the kernel to take its handshake.
   */
  opened: number;
}

/** Latency (ms) of the answered requests sent in [from, to). */
export function latencyBetween(attempts: Attempt[], from: number, to: number): Latency {
  const answered = attempts.filter((a) => a.status !== undefined && a.sentAt >= from && a.sentAt < to);
  const ms = answered.map((a) => a.ms);
  return { n: ms.length, p50: quantile(ms, 0.5), p99: quantile(ms, 0.99), max: ms.length ? Math.max(...ms) : NaN, opened: answered.filter((a) => a.opened === true).length };
}

/** One storm: the restart, who came back when, what they and the requests around them saw. */
export interface StormResult {
  scenario: ScenarioName;
  clients: number;
  acceptRate: number;
  acceptBurst: number;
  restart: Restart;
  recovery: Recovery;
  refusals: Refusals;
  /** Failed attempts other than 503 (connection refused while down, reset, closed before `subscribed`). */
  otherFailures: number;
  admission: Admission;
  /** The subscribers' counts over the storm (from before the signal until all were back and caught up). */
  counts: SeqCounts;
  /** How many subscribers lost events, saw duplicates, were told to resync over the storm. */
  affected: { lost: number; duplicated: number; resynced: number };
  /** Every subscriber reached its order's revision as read once all were back (writes go on meanwhile). */
  caughtUp: boolean;
  /** From the signal until the new instance answered: the probe's and the writes' outcomes. */
  probeRestart: Record<string, number>;
  writesRestart: Record<string, number>;
  /** The probe's latency before the storm and while the subscribers came back (new instance answering until all back). */
  probeBefore: Latency;
  probeRecovery: Latency;
}

export interface Goals {
  refusals: number;
  backS: number;
  p99Ms: number;
}

const s1 = (x: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(1));
const ms = (x: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(1));

/**
 * The targets of one storm. Refusals, time back and the probe are the limiter's targets:
 * judged on the storms under the limiter, reported without a verdict on the capacity
 * storm (its limiter is lifted on purpose). Losses and duplicates are judged on every storm;
 * resets on the graceful one (the drain answers everything that arrived).
 */
export function stormTargets(r: StormResult, g: Goals): Target[] {
  const judged = r.scenario !== 'capacity';
  const rec = r.recovery;
  const out: Target[] = [
    {
      name: 'refusals (503) per client',
      value: `${r.refusals.mean.toFixed(2)} on average, max ${r.refusals.max}, ${r.refusals.total} in all over ${r.refusals.clients} clients`,
      goal: `<= ${g.refusals} on average`,
      met: judged ? r.refusals.mean <= g.refusals : undefined,
    },
    {
      name: 'all subscribers back',
      value:
        rec.allBackAt === undefined
          ? `${rec.back} of ${rec.dropped} back when the bench gave up`
          : `${s1(rec.fromSignalS)} s after the ${r.restart.signal === 'SIGKILL' ? 'kill' : 'SIGTERM'}, ${s1(rec.fromListeningS)} s after the new instance answered (half in ${s1(rec.p50FromListeningS)} s)`,
      goal: `within ${g.backS} s of the ${r.restart.signal === 'SIGKILL' ? 'kill' : 'SIGTERM'}`,
      met: rec.allBackAt === undefined ? false : judged ? rec.fromSignalS <= g.backS : undefined,
    },
    {
      name: 'probe p99 while they came back',
      value: `${ms(r.probeRecovery.p99)} ms (p50 ${ms(r.probeRecovery.p50)}, max ${ms(r.probeRecovery.max)}, ${r.probeRecovery.n} requests, ${r.probeRecovery.opened} on a connection they opened; before the storm p99 ${ms(r.probeBefore.p99)})`,
      goal: `< ${g.p99Ms} ms`,
      met: judged && r.probeRecovery.n > 0 ? r.probeRecovery.p99 < g.p99Ms : undefined,
    },
    {
      name: 'events lost or duplicated in the storm',
      value:
        `${r.counts.lost} lost, ${r.counts.duplicates} duplicated (${r.counts.delivered} delivered, ${r.counts.resyncs} resyncs); ` +
        `subscribers that lost any ${r.affected.lost}, saw a duplicate ${r.affected.duplicated}, resynced ${r.affected.resynced}; ${r.caughtUp ? 'all' : 'NOT all'} caught up after`,
      goal: '0 and 0, all caught up',
      met: r.counts.lost === 0 && r.counts.duplicates === 0 && r.counts.violations === 0 && r.affected.lost === 0 && r.affected.duplicated === 0 && r.caughtUp,
    },
  ];
  if (r.restart.signal === 'SIGTERM') {
    const resets = (r.probeRestart.ECONNRESET ?? 0) + (r.writesRestart.ECONNRESET ?? 0);
    out.push({ name: 'requests reset by the graceful shutdown', value: `${resets} (probe ${fmt(r.probeRestart)}; writes ${fmt(r.writesRestart)})`, goal: '0', met: resets === 0 });
  }
  return out;
}

/** A tally as `k: v, ...` (none when empty), keys sorted. */
export const fmt = (m: Record<string, number>): string =>
  Object.keys(m)
    .sort()
    .map((k) => `${k}: ${m[k]}`)
    .join(', ') || 'none';
