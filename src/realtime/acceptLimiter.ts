/**
 * Token bucket for new stream connections (ACCEPT_RATE per second, burst ACCEPT_BURST,
 * per instance). In a reconnect storm, clients over the rate get 503 with
 * Retry-After and come back spread out by their jittered backoff, while the connections
 * already open and every other request keep being served.
 */
export class AcceptLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = this.now();
  }

  /** Takes one token; when none is left, says how many whole seconds until one is. */
  take(): { ok: true } | { ok: false; retryAfterS: number } {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.ratePerSecond);
    this.last = t;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterS: Math.max(1, Math.ceil((1 - this.tokens) / this.ratePerSecond)) };
  }
}
