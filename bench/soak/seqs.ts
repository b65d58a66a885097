/**
 * One subscriber's account of the seqs it saw, across every reconnect, judged by the
 * contract's wire rule only (contracts/asyncapi.yaml): keep the last seq; an event with
 * seq = last + 1 is applied; seq <= last was already seen; seq > last + 1 is a gap (the
 * client GETs the order); a `resync` is adopted (GET, then continue from its seq).
 *
 * Exact counts, not estimates: a gap's missing seqs are remembered as ranges, so a seq
 * that arrives late is counted out of order (not lost, not duplicated) and a seq that
 * arrives twice is a duplicate. Seqs a resync skipped are counted apart: the client was
 * told to reload, nothing was lost silently.
 */

/** What the client does with a message after accounting for it. */
export type Step = 'apply' | 'drop' | 'gap' | 'resync';

export interface SeqCounts {
  /** Events applied (seq = last + 1, or the first after a gap). */
  delivered: number;
  /** Events whose seq had already been applied. */
  duplicates: number;
  /** Events that arrived after a later seq, filling a gap (neither lost nor duplicated). */
  outOfOrder: number;
  /** Jumps (seq > last + 1): each one a GET for the client. */
  gaps: number;
  /** Seqs never delivered: still missing from gaps, plus any shortfall at the end. */
  lost: number;
  /** `resync` messages adopted, and the seqs they skipped (counted apart from lost). */
  resyncs: number;
  resyncSkipped: number;
  /** Contract breaches other than the above (a `subscribed` not at the resume point, a resync going back, ending ahead of the head). */
  violations: number;
}

const MAX_NOTES = 5;

export class SeqAccount {
  /** The last seq applied (or adopted from a resync). */
  last: number;
  private readonly missing: [number, number][] = [];
  private readonly c = { delivered: 0, duplicates: 0, outOfOrder: 0, gaps: 0, resyncs: 0, resyncSkipped: 0, violations: 0 };
  /** The first few breaches, for the report. */
  readonly notes: string[] = [];

  constructor(readonly start: number) {
    this.last = start;
  }

  private violation(what: string): void {
    this.c.violations++;
    if (this.notes.length < MAX_NOTES) this.notes.push(what);
  }

  /** The resume point of the next connection (WebSocket `since`, SSE Last-Event-ID). */
  since(): number {
    return this.last;
  }

  /** `subscribed` answers a subscription that resumed from `since`: its seq must be that resume point. */
  subscribed(seq: number, since: number): void {
    if (seq !== since) this.violation(`subscribed at ${seq}, resumed from ${since}`);
  }

  /** An order event. */
  event(seq: number): Step {
    if (seq === this.last + 1) {
      this.c.delivered++;
      this.last = seq;
      return 'apply';
    }
    if (seq <= this.last) {
      if (this.fill(seq)) this.c.outOfOrder++;
      else this.c.duplicates++;
      return 'drop';
    }
    this.c.gaps++;
    this.missing.push([this.last + 1, seq - 1]);
    this.c.delivered++;
    this.last = seq;
    return 'gap';
  }

  /** A `resync`: the client GETs the order and continues from `seq`. */
  resync(seq: number): Step {
    this.c.resyncs++;
    if (seq < this.last) this.violation(`resync back from ${this.last} to ${seq}`);
    else this.c.resyncSkipped += seq - this.last;
    this.last = seq;
    return 'resync';
  }

  /** Removes `seq` from the missing ranges; false when it was not missing. */
  private fill(seq: number): boolean {
    const i = this.missing.findIndex(([lo, hi]) => seq >= lo && seq <= hi);
    if (i < 0) return false;
    const [lo, hi] = this.missing[i];
    const parts: [number, number][] = [];
    if (lo < seq) parts.push([lo, seq - 1]);
    if (seq < hi) parts.push([seq + 1, hi]);
    this.missing.splice(i, 1, ...parts);
    return true;
  }

  /** The counts; given the topic's final head, every seq up to it must have been seen (without: so far). */
  finish(head = this.last): SeqCounts {
    const stillMissing = this.missing.reduce((s, [lo, hi]) => s + hi - lo + 1, 0);
    return { ...this.c, violations: this.c.violations + (this.last > head ? 1 : 0), lost: stillMissing + Math.max(0, head - this.last) };
  }
}

export const zeroCounts = (): SeqCounts => ({ delivered: 0, duplicates: 0, outOfOrder: 0, gaps: 0, lost: 0, resyncs: 0, resyncSkipped: 0, violations: 0 });

export function addCounts(a: SeqCounts, b: SeqCounts): SeqCounts {
  const out = { ...a };
  for (const k of Object.keys(out) as (keyof SeqCounts)[]) out[k] += b[k];
  return out;
}
