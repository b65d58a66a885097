/**
 * A reconnect storm, deterministically: the service's accept limiter (src/realtime/
 * acceptLimiter.ts) driven by a simulated clock, and clients that wait exactly as the
 * SDK's realtime client waits (`retryDelay`: the refusal's Retry-After plus random(0, 1 s);
 * `nextAttempt`: such a refusal does not lengthen the backoff), with seeded randomness. No sockets and no sleeps:
 * what is measured is how many refusals the storm draws per client, which depends only
 * on what the limiter tells each client and on how the client honours it.
 */
import { AcceptLimiter } from '../../src/realtime';
import { DEFAULT_BACKOFF, nextAttempt, reconnectDelay, retryDelay } from '@orderline/sdk/realtime';

/** A small seeded generator (mulberry32): the same storm on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface StormResult {
  refusalsPerClient: number;
  maxRefusals: number;
  /** Seconds until the last client was admitted. */
  lastAdmittedS: number;
}

type Wait = (attempt: number, retryAfterS: number, random: () => number) => number;
/** The SDK's bookkeeping: the wait for an attempt, and the attempt count after a refusal with Retry-After. */
const SDK = { wait: (attempt: number, retryAfterS: number, random: () => number) => retryDelay(attempt, retryAfterS, DEFAULT_BACKOFF, random), next: nextAttempt };

/**
 * `clients` connections dropped at once reconnect (first attempt after the SDK's
 * jittered backoff for attempt `from`: 0 when the instance answers at once, more when its
 * closed port already refused some attempts, as in a restart); each refused one waits
 * `wait(attempt, retryAfterS)` and tries again.
 */
function storm(clients: number, rate: number, burst: number, seed: number, wait: Wait, next: (attempt: number, retryAfterS: number) => number = nextAttempt, from = 0): StormResult {
  const random = seeded(seed);
  let now = 0;
  const limiter = new AcceptLimiter(rate, burst, () => now);
  // Pending arrivals, kept sorted by time (a few hundred clients: a sorted array will do).
  const queue: { at: number; client: number; attempt: number }[] = [];
  const insert = (e: (typeof queue)[number]) => {
    let i = queue.length;
    while (i > 0 && queue[i - 1].at > e.at) i--;
    queue.splice(i, 0, e);
  };
  for (let c = 0; c < clients; c++) insert({ at: reconnectDelay(from, DEFAULT_BACKOFF, random), client: c, attempt: from });
  const refusals = new Array<number>(clients).fill(0);
  let lastAdmitted = 0;
  while (queue.length > 0) {
    const e = queue.shift()!;
    now = e.at;
    const r = limiter.take();
    if (r.ok) {
      lastAdmitted = now;
      continue;
    }
    refusals[e.client]++;
    const attempt = next(e.attempt, r.retryAfterS);
    insert({ at: now + wait(attempt, r.retryAfterS, random), client: e.client, attempt });
  }
  return { refusalsPerClient: refusals.reduce((a, b) => a + b, 0) / clients, maxRefusals: Math.max(...refusals), lastAdmittedS: lastAdmitted / 1000 };
}

describe('a reconnect storm against the accept limiter', () => {
  it.each([
    [300, 10, 20],
    [300, 20, 40],
    [1000, 50, 100],
    [300, 10, 5], // a burst smaller than the rate
  ])('%i clients at ACCEPT_RATE %i, ACCEPT_BURST %i: at most 2 refusals per client on average, all back in about clients / rate seconds', (clients, rate, burst) => {
    for (const seed of [1, 2, 3]) {
      const r = storm(clients, rate, burst, seed, SDK.wait);
      expect(r.refusalsPerClient).toBeLessThanOrEqual(2);
      expect(r.maxRefusals).toBeLessThanOrEqual(4);
      // Everyone is back within the time the rate needs (promises go at min(rate, burst / 2)), plus the last one's second.
      expect(r.lastAdmittedS).toBeLessThanOrEqual(clients / Math.min(rate, burst / 2) + 3);
    }
  });

  it.each([2, 3])('after a restart whose closed port refused each client %i times first: 10,000 at 500 / 1000 all back in about clients / rate seconds', (from) => {
    for (const seed of [1, 2, 3]) {
      const r = storm(10_000, 500, 1000, seed, SDK.wait, SDK.next, from);
      expect(r.refusalsPerClient).toBeLessThanOrEqual(2);
      // Counted from the first arrivals (the backoff for attempt `from`: at most 1.5 x base x 2^from).
      expect(r.lastAdmittedS).toBeLessThanOrEqual((1.5 * DEFAULT_BACKOFF.baseMs * 2 ** from) / 1000 + 10_000 / 500 + 3);
    }
  });

  it('a client that waits out a longer backoff instead, refusals counted (the SDK before), comes back seconds after its place', () => {
    const before = {
      wait: (attempt: number, retryAfterS: number, random: () => number) => Math.max(reconnectDelay(attempt, DEFAULT_BACKOFF, random), (retryAfterS + random()) * 1000),
      next: (attempt: number) => attempt + 1,
    };
    const late = [1, 2, 3].map((seed) => storm(10_000, 500, 1000, seed, before.wait, before.next, 3).lastAdmittedS);
    const onTime = [1, 2, 3].map((seed) => storm(10_000, 500, 1000, seed, SDK.wait, SDK.next, 3).lastAdmittedS);
    expect(Math.min(...late)).toBeGreaterThan(Math.max(...onTime) + 5);
  });

  it('a client that ignores Retry-After and keeps to its backoff alone draws many more refusals (what the line saves)', () => {
    const ignoring = storm(300, 10, 20, 1, (attempt, _s, random) => reconnectDelay(attempt, DEFAULT_BACKOFF, random));
    const honouring = storm(300, 10, 20, 1, SDK.wait);
    expect(ignoring.refusalsPerClient).toBeGreaterThan(2 * honouring.refusalsPerClient);
  });
});
