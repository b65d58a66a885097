import { retryAfterSeconds } from '../limits';

/**
 * Token bucket for new stream connections (ACCEPT_RATE per second, burst ACCEPT_BURST,
 * per instance). In a reconnect storm, clients over the rate get 503 with Retry-After,
 * while the connections already open and every other request keep being served.
 *
 * The Retry-After tells each refused client when it will be admitted: refused clients
 * are promised places in a line, one per `1 / promiseRate` seconds after the ones
 * already promised, so a storm of N clients is spread over the N / rate seconds it
 * needs instead of coming back all together a second later (and being refused again).
 * `promiseRate` is the rate, or half the burst if that is smaller: a client told "n
 * seconds" comes back within n and n + 1 (the SDK adds random(0, 1 s)), so the tokens
 * for up to two seconds of promises must fit in the bucket. Clients that never come back
 * cost nothing: the line only sets what the next refusals are told.
 */
export class AcceptLimiter {
  private tokens: number;
  private last: number;
  /** Clock time (ms) from which the next refused client can be promised a place. */
  private lineEnd: number;
  /** Milliseconds between two promised places. */
  private readonly spacingMs: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = this.now();
    this.lineEnd = this.last;
    this.spacingMs = 1000 / Math.min(ratePerSecond, Math.max(burst / 2, Number.MIN_VALUE));
  }

  /** Takes one token; when none is left, says in how many whole seconds this client will find its own. */
  take(): { ok: true } | { ok: false; retryAfterS: number } {
    const t = this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { ok: true };
    }
    const place = this.placeAt(t);
    this.lineEnd = place + this.spacingMs;
    return { ok: false, retryAfterS: retryAfterSeconds(place - t) };
  }

  /**
   * What `take` would answer now, spending no token and promising no place: a HEAD of a
   * stream asks what its GET would get (RFC 9110 9.3.2), and the SDK asks it after a refused
   * WebSocket upgrade, so neither may use up the admission it asks about.
   */
  peek(): { ok: true } | { ok: false; retryAfterS: number } {
    const t = this.refill();
    if (this.tokens >= 1) return { ok: true };
    return { ok: false, retryAfterS: retryAfterSeconds(this.placeAt(t) - t) };
  }

  /** Adds the tokens earned since the last call; returns the time it did so. */
  private refill(): number {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.ratePerSecond);
    this.last = t;
    return t;
  }

  /** A client refused at `t`: its place is after everyone promised before it, and no sooner than the next token. */
  private placeAt(t: number): number {
    return Math.max(this.lineEnd, t + ((1 - this.tokens) / this.ratePerSecond) * 1000);
  }

  /** Seconds of promises ahead of a client refused now (metrics, tests). */
  get backlogS(): number {
    return Math.max(0, (this.lineEnd - this.now()) / 1000);
  }
}
