/**
 * When the cluster primary replaces a dead worker. A worker that served for a while and
 * died (a crash on some rare request, an OOM) is replaced after the base delay. A worker
 * that dies soon after its start is probably dying of something every replacement will
 * meet too (a port, a file, a dependency gone): each such death in a row doubles the
 * delay, and after `maxEarlyDeaths` in a row the primary gives up and stops the cluster
 * with an error, instead of forking a doomed worker every second forever.
 */
export interface RestartPolicyOptions {
  /** Delay before replacing a worker after a death that ends no run of early deaths. */
  baseMs: number;
  /** Ceiling of the doubled delay. */
  maxMs: number;
  /** A worker that lived less than this died "early". */
  stableMs: number;
  /** Early deaths in a row after which the primary gives up. */
  maxEarlyDeaths: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicyOptions = { baseMs: 1000, maxMs: 30_000, stableMs: 10_000, maxEarlyDeaths: 5 };

export type RestartDecision = { restart: true; delayMs: number } | { restart: false; earlyDeaths: number };

export class RestartPolicy {
  private earlyDeaths = 0;

  constructor(private readonly opts: RestartPolicyOptions = DEFAULT_RESTART_POLICY) {}

  /** A worker died after living `livedMs`: when to replace it, or not at all. */
  died(livedMs: number): RestartDecision {
    if (livedMs >= this.opts.stableMs) {
      this.earlyDeaths = 0;
      return { restart: true, delayMs: this.opts.baseMs };
    }
    this.earlyDeaths += 1;
    if (this.earlyDeaths >= this.opts.maxEarlyDeaths) return { restart: false, earlyDeaths: this.earlyDeaths };
    return { restart: true, delayMs: Math.min(this.opts.maxMs, this.opts.baseMs * 2 ** (this.earlyDeaths - 1)) };
  }
}
