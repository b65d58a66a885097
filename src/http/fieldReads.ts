/**
 * The read volume of a deprecated field per client (what decides when it can go), kept where it scales:
 * - in Prometheus, `orderline_deprecated_field_reads_total{account,field}` has a series for
 *   at most `topAccounts` accounts; every other account counts in `account="(other)"`. A
 *   label per account would grow the series with the number of accounts (Prometheus'
 *   guidance on cardinality). Which accounts get a label: at start, the ones that read
 *   most over the last 30 days (from the store), then the first ones to read, until the
 *   slots are taken. A label once given is kept for the life of the process, so every
 *   series stays a monotonic counter. With WORKERS>1 each worker chooses for itself, so a
 *   labelled account may also count in `(other)` on a worker that had no slot left;
 * - in the store (`FieldReadCounts`), the exact count per account, field and day, for an
 *   operator's query. Reads are tallied in memory and written by `flush()`, which the
 *   service calls every `FIELD_READS_FLUSH_S` seconds and at shutdown: no store write per
 *   request. Reads tallied since the last flush are lost if the process is killed (-9).
 *
 * `record` is on the request path: two map lookups and a counter increment.
 */
import type { Counter } from 'prom-client';
import type { Account, FieldReadCounts, FieldReads } from '../store';

/** The label value of every account without a series of its own: parentheses never occur in an account name. */
export const OTHER_ACCOUNTS = '(other)';
/** How far back the store's counts decide which accounts are labelled at start. */
const SEED_DAYS = 30;
const DAY_MS = 86_400_000;

interface Pending {
  accountId: number;
  field: string;
  reads: number;
}

export class FieldReadTally {
  /** Account names with a series of their own. */
  private readonly labelled = new Set<string>();
  private readonly children = new Map<string, { inc(): void }>();
  private pending = new Map<string, Pending>();
  private readonly now: () => number;

  constructor(
    private readonly counter: Counter<'account' | 'field'>,
    private readonly store: FieldReadCounts,
    private readonly opts: { topAccounts: number; now?: () => number },
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** One response that carried `field` went to `account`. */
  record(account: Account, field: string): void {
    let label = account.name;
    if (!this.labelled.has(label)) {
      if (this.labelled.size < this.opts.topAccounts) this.labelled.add(label);
      else label = OTHER_ACCOUNTS;
    }
    const childKey = `${label}\u0000${field}`;
    let child = this.children.get(childKey);
    if (!child) {
      child = this.counter.labels({ account: label, field });
      this.children.set(childKey, child);
    }
    child.inc();
    const key = `${account.id}\u0000${field}`;
    const p = this.pending.get(key);
    if (p) p.reads++;
    else this.pending.set(key, { accountId: account.id, field, reads: 1 });
  }

  /** Gives labels to the accounts that read most over the last 30 days (call before serving). */
  async seed(): Promise<void> {
    if (this.opts.topAccounts === 0) return;
    const since = this.dayOf(this.now() - SEED_DAYS * DAY_MS);
    for (const row of await this.store.fieldReadTotals(since, 1000)) {
      if (this.labelled.size >= this.opts.topAccounts) break;
      this.labelled.add(row.account);
    }
  }

  /** Account names labelled so far, in the order they were given a series. */
  labelledAccounts(): string[] {
    return [...this.labelled];
  }

  /** The flush writing now, if any (see `flush`). */
  private writing: Promise<void> | undefined;

  /**
   * Writes the reads tallied since the last flush to the store, counted on today's (UTC)
   * date; on failure they stay tallied for the next flush, and the error is thrown. One
   * write at a time: a flush asked for while another writes waits for it, then writes what
   * is left (that one's reads too, had it failed). So the last flush at shutdown settles
   * only once a periodic one in flight has, and its reads are either stored or reported lost.
   */
  async flush(): Promise<void> {
    while (this.writing) await this.writing.catch(() => undefined);
    if (this.pending.size === 0) return;
    const writing = this.write();
    this.writing = writing;
    try {
      await writing;
    } finally {
      if (this.writing === writing) this.writing = undefined;
    }
  }

  private async write(): Promise<void> {
    const taken = this.pending;
    this.pending = new Map();
    const day = this.dayOf(this.now());
    const batch: FieldReads[] = [...taken.values()].map((p) => ({ ...p, day }));
    try {
      await this.store.addFieldReads(batch);
    } catch (err) {
      for (const [key, p] of taken) {
        const now = this.pending.get(key);
        if (now) now.reads += p.reads;
        else this.pending.set(key, p);
      }
      throw err;
    }
  }

  private dayOf(ms: number): string {
    return new Date(ms).toISOString().slice(0, 10);
  }
}

/** Flushes `tally` every `everyMs` (unref'd timer; one flush at a time); returns a stop function. */
export function startFieldReadFlusher(tally: FieldReadTally, { everyMs, onError }: { everyMs: number; onError?: (err: unknown) => void }): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    tally
      .flush()
      .catch((err: unknown) => onError?.(err))
      .finally(() => (running = false));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
