/**
 * Open streams by the bearer token that opened them, the token checked again every
 * STREAM_TOKEN_RECHECK_S: a stream whose token no longer resolves (revoked with `npm run
 * token -- --revoke`, or its account's tokens removed) is ended, so a revoked token stops
 * working for streams as it does for requests (within AUTH_CACHE_TTL_MS), not only once the
 * client reconnects. An SSE stream ends (its client's reconnect gets 401); a WebSocket
 * connection (/orders, GraphQL subscriptions on /graphql) closes 1008 "Token revoked", and its
 * reconnect is refused 401 too (GraphQL in band: 4403).
 *
 * A round asks the one authentication every request uses (auth.ts, through its cache) once per
 * distinct token, one token after another: thousands of streams on a few tokens cost a few
 * lookups. Only a 401 ends streams: a store that cannot answer (503) leaves them open, and the
 * next round asks again. One round at a time.
 */
import { StoreUnavailableError, type Account } from '../store';
import { isRefusal, type Refusal } from '../http';

export class TokenRecheck {
  /** Token -> how to end each stream it opened. */
  private readonly holders = new Map<string, Set<() => void>>();
  private readonly timer: NodeJS.Timeout | undefined;
  private round: Promise<number> | undefined;

  /** `intervalMs` 0: never checked again (streams live until they end otherwise). */
  constructor(
    private readonly authenticate: (token: string) => Promise<Account | Refusal>,
    intervalMs: number,
    private readonly onError?: (err: unknown) => void,
  ) {
    if (intervalMs > 0) {
      this.timer = setInterval(() => void this.recheck(), intervalMs);
      this.timer.unref();
    }
  }

  /** A stream opened with `token`; `end` ends it when the token stops resolving. Returns what gives the hold back (at the stream's end; twice is harmless). */
  hold(token: string, end: () => void): () => void {
    let set = this.holders.get(token);
    if (!set) this.holders.set(token, (set = new Set()));
    set.add(end);
    return () => {
      const now = this.holders.get(token);
      if (!now?.delete(end) || now.size > 0) return;
      this.holders.delete(token);
    };
  }

  /** The tokens held now (tests, stats). */
  get tokens(): number {
    return this.holders.size;
  }

  /** One round (the timer's; tests call it): resolves to how many streams it ended. */
  recheck(): Promise<number> {
    this.round ??= this.checkAll().finally(() => (this.round = undefined));
    return this.round;
  }

  private async checkAll(): Promise<number> {
    let ended = 0;
    for (const token of [...this.holders.keys()]) {
      let found: Account | Refusal;
      try {
        found = await this.authenticate(token);
      } catch (err) {
        if (!(err instanceof StoreUnavailableError)) this.onError?.(err);
        continue;
      }
      if (!isRefusal(found) || found.problem.status !== 401) continue;
      const ends = this.holders.get(token);
      this.holders.delete(token);
      for (const end of ends ?? []) {
        ended++;
        end();
      }
    }
    return ended;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
