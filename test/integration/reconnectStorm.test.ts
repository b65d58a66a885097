/**
 * A reconnect storm, deterministically: the service's accept limiter (src/realtime/
 * acceptLimiter.ts) driven by a simulated clock, and clients that wait exactly as the
 * SDK's realtime client waits (`Reconnects`: the refusal's Retry-After plus random(0, 1 s),
 * not counted for the backoff), with seeded randomness. No sockets and no sleeps:
 * what is measured is how many refusals the storm draws per client, which depends only
 * on what the limiter tells each client and on how the client honours it.
 */
import { AcceptLimiter } from '../../src/realtime';
import { DEFAULT_BACKOFF, Reconnects, reconnectDelay, retryDelay } from '@orderline/sdk/realtime';

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

/** One client's reconnect bookkeeping: the wait (ms) after an attempt refused with `retryAfterS`. */
interface Client {
  next(retryAfterS: number | undefined): number;
}
/** The SDK's (`Reconnects`). */
const sdk = (random: () => number): Client => new Reconnects(DEFAULT_BACKOFF, random);
/** The SDK before: the longer of the backoff and Retry-After, every refusal counted. */
const longerOfBoth = (random: () => number): Client => {
  let attempt = 0;
  return { next: (retryAfterS) => retryDelay(attempt++, retryAfterS, DEFAULT_BACKOFF, random) };
};
/** A client that ignores Retry-After: its backoff alone. */
const backoffOnly = (random: () => number): Client => {
  let attempt = 0;
  return { next: () => reconnectDelay(attempt++, DEFAULT_BACKOFF, random) };
};

/**
 * `clients` connections dropped at once reconnect; each refused one waits what its
 * bookkeeping says and tries again. `from`: attempts each client had already lost to a
 * closed port (a restart) before the instance answered, counted by its bookkeeping; the
 * first arrivals come after the backoff for that attempt.
 */
function storm(clients: number, rate: number, burst: number, seed: number, make: (random: () => number) => Client, from = 0): StormResult {
  const random = seeded(seed);
  let now = 0;
  const limiter = new AcceptLimiter(rate, burst, () => now);
  // Pending arrivals, kept sorted by time (appended near the end: a sorted array will do).
  const queue: { at: number; client: number }[] = [];
  const insert = (e: (typeof queue)[number]) => {
    let i = queue.length;
    while (i > 0 && queue[i - 1].at > e.at) i--;
    queue.splice(i, 0, e);
  };
  const bookkeeping: Client[] = [];
  for (let c = 0; c < clients; c++) {
    const client = make(random);
    let first = 0;
    for (let i = 0; i <= from; i++) first = client.next(undefined);
    bookkeeping.push(client);
    insert({ at: first, client: c });
  }
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
    insert({ at: now + bookkeeping[e.client].next(r.retryAfterS), client: e.client });
  }
  return { refusalsPerClient: refusals.reduce((x, y) => x + y, 0) / clients, maxRefusals: Math.max(...refusals), lastAdmittedS: lastAdmitted / 1000 };
}

describe('a reconnect storm against the accept limiter', () => {
  it.each([
    [300, 10, 20],
    [300, 20, 40],
    [1000, 50, 100],
    [300, 10, 5], // a burst smaller than the rate
  ])('%i clients at ACCEPT_RATE %i, ACCEPT_BURST %i: at most 2 refusals per client on average, all back in about clients / rate seconds', (clients, rate, burst) => {
    for (const seed of [1, 2, 3]) {
      const r = storm(clients, rate, burst, seed, sdk);
      expect(r.refusalsPerClient).toBeLessThanOrEqual(2);
      expect(r.maxRefusals).toBeLessThanOrEqual(4);
      // Everyone is back within the time the rate needs (promises go at min(rate, burst / 2)), plus the last one's second.
      expect(r.lastAdmittedS).toBeLessThanOrEqual(clients / Math.min(rate, burst / 2) + 3);
    }
  });

  it.each([2, 3])('after a restart whose closed port refused each client %i times first: 10,000 at 500 / 1000 all back in about clients / rate seconds', (from) => {
    for (const seed of [1, 2, 3]) {
      const r = storm(10_000, 500, 1000, seed, sdk, from);
      expect(r.refusalsPerClient).toBeLessThanOrEqual(2);
      // Counted from the first arrivals (the backoff for attempt `from`: at most 1.5 x base x 2^from).
      expect(r.lastAdmittedS).toBeLessThanOrEqual((1.5 * DEFAULT_BACKOFF.baseMs * 2 ** from) / 1000 + 10_000 / 500 + 3);
    }
  });

  it('a client that waits the longer of its backoff and Retry-After, refusals counted (the SDK before), comes back seconds after its place', () => {
    const late = [1, 2, 3].map((seed) => storm(10_000, 500, 1000, seed, longerOfBoth, 3).lastAdmittedS);
    const onTime = [1, 2, 3].map((seed) => storm(10_000, 500, 1000, seed, sdk, 3).lastAdmittedS);
    expect(Math.min(...late)).toBeGreaterThan(Math.max(...onTime) + 5);
  });

  it('a client that ignores Retry-After and keeps to its backoff alone draws many more refusals (what the line saves)', () => {
    const ignoring = storm(300, 10, 20, 1, backoffOnly);
    const honouring = storm(300, 10, 20, 1, sdk);
    expect(ignoring.refusalsPerClient).toBeGreaterThan(2 * honouring.refusalsPerClient);
  });
});
