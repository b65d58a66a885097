/**
 * The field-read counts port: how often each account read each deprecated field, per day
 * (read volume per client, tracked before a field is removed). Types only.
 *
 * The exact per-account numbers live here, where an operator can query them, because a
 * Prometheus label per account would grow without bound (the metric keeps the top
 * accounts and one overflow series, http/fieldReads.ts). Writes come in batches, off the
 * request path: the service counts in memory and flushes every few seconds and on
 * shutdown, never one store write per request.
 */

/** Reads of one field by one account on one day, to add to the stored count. */
export interface FieldReads {
  accountId: number;
  /** The deprecated field, as the contract names it (e.g. `discount_code`). */
  field: string;
  /** The UTC day the reads were counted on, `YYYY-MM-DD`. */
  day: string;
  /** A positive safe integer. */
  reads: number;
}

/** An account's total reads of one field over a span of days. */
export interface FieldReadTotal {
  account: string;
  field: string;
  reads: number;
}

export interface FieldReadCounts {
  /**
   * Adds every entry's `reads` to the stored count of its (account, field, day), creating
   * it at 0 first; entries with the same key add up. All or nothing: when one entry cannot
   * be stored (an unknown account) the batch rejects and no count changes. Concurrent
   * batches from any number of processes add up exactly (no lost update).
   */
  addFieldReads(batch: readonly FieldReads[]): Promise<void>;
  /**
   * Reads per (account, field) summed over the days from `sinceDay` (`YYYY-MM-DD`,
   * inclusive) on: most reads first, then by account name and field (a stable order), at
   * most `limit` rows.
   */
  fieldReadTotals(sinceDay: string, limit: number): Promise<FieldReadTotal[]>;
}
