import { refusal, shuttingDown, type Refusal } from '../http';
import type { AcceptLimiter } from './acceptLimiter';
import type { StreamQuota } from './quota';

/**
 * New stream connections (WebSocket upgrades, SSE requests) are checked in arrival order,
 * at most `perTurn` per turn of the event loop; the rest wait their turn.
 *
 * Why: in a reconnect storm thousands of clients reconnect within a second. Checked as
 * their upgrades are parsed, one turn of the event loop does the work of every upgrade it
 * read (about 0.2 ms each to authenticate, consult the accept limiter and answer, most of
 * them 503), and libuv accepts one new connection per turn: while turns last tens of ms,
 * the kernel's listen queue fills (4,096), handshakes are dropped and sent again one and
 * three seconds later, and requests on connections already open wait behind the turn.
 * Queued, each turn checks a small slice and goes back to the I/O that arrived meanwhile:
 * requests on open connections, the next connection to accept. The total work is the
 * same; what changes is who waits for it (the storm's clients, a little longer).
 *
 * Outside a storm nothing waits: a connection arriving while this turn's slice is not used
 * up goes on at once (one microtask). A waiting connection whose client left (`alive`
 * false when its turn comes) is let go without using a place in the slice: the caller sees
 * its socket gone and drops it unchecked. `close()` (shutdown) answers every waiting
 * connection `false`, and every later one at once: the caller refuses it as the drain
 * refuses requests.
 */
export class AdmissionQueue {
  /** Waiting connections, oldest first from `head` (an index, so that taking one is O(1)). */
  private waiting: Waiter[] = [];
  private head = 0;
  /** Connections let through in this turn of the event loop. */
  private used = 0;
  private scheduled = false;
  private closed = false;

  constructor(private readonly perTurn: number) {}

  /**
   * Resolves `true` when it is this connection's turn to be checked (or, `alive` having
   * turned false while it waited, when it was let go), `false` when the instance is
   * shutting down.
   */
  turn(alive: () => boolean = always): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (this.head === this.waiting.length && this.used < this.perTurn) {
      this.used++;
      this.schedule();
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      this.waiting.push({ resolve, alive });
      this.schedule();
    });
  }

  /**
   * Whether shutdown has begun. A connection already past its turn checks it again after
   * its last wait (authentication, the order read: a store can take a while), so that none
   * is opened once the streams were told to go away.
   */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Connections waiting for their turn (tests). */
  get length(): number {
    return this.waiting.length - this.head;
  }

  close(): void {
    this.closed = true;
    const waiting = this.waiting.slice(this.head);
    this.waiting = [];
    this.head = 0;
    for (const w of waiting) w.resolve(false);
  }

  /** A new turn begins in the check phase, after the I/O of this one was read. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.nextTurn);
  }

  private readonly nextTurn = (): void => {
    this.scheduled = false;
    this.used = 0;
    while (this.head < this.waiting.length && this.used < this.perTurn) {
      const w = this.waiting[this.head];
      this.waiting[this.head++] = DONE;
      if (w.alive()) this.used++;
      w.resolve(true);
    }
    if (this.head === this.waiting.length) {
      this.waiting = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.waiting.length) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
    // A slice was let through: the next turn resets the count (and lets the next slice through).
    if (this.used > 0) this.schedule();
  };
}

interface Waiter {
  resolve: (open: boolean) => void;
  alive: () => boolean;
}

function always(): boolean {
  return true;
}

/** What a released place in `waiting` holds until the array is trimmed (no reference kept to the connection). */
const DONE: Waiter = { resolve: () => undefined, alive: always };

/** What the last checks of a new stream consult. */
export interface StreamGate {
  quota: StreamQuota;
  admission: AdmissionQueue;
  limiter: AcceptLimiter;
}

/**
 * The last checks of a new stream, in one order for SSE and WebSocket: the account has a
 * place left (429), the server is not shutting down (503), the accept limiter admits one
 * more (503 with Retry-After). The place is checked before the limiter is asked (an account
 * over its cap spends no admission of others'); the caller takes it only once the limiter
 * admitted (a stream the limiter holds off holds no place). `peek` (a HEAD) asks the limiter
 * without spending an admission. No account (a GraphQL connection that authenticates in
 * band): the shutdown and the limiter alone; the place is claimed then.
 */
export function lastChecks(gate: StreamGate, account: number | undefined, peek = false): Refusal | undefined {
  if (account !== undefined && !gate.quota.hasRoom(account)) return gate.quota.refusal();
  if (gate.admission.isClosed) return shuttingDown();
  const admitted = peek ? gate.limiter.peek() : gate.limiter.take();
  if (!admitted.ok) return refusal('SERVICE_UNAVAILABLE', 'Too many new connections: retry later', { 'Retry-After': String(admitted.retryAfterS) });
  return undefined;
}
