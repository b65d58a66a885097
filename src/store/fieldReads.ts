/**
 * What both adapters of the field-read counts port (ports/fieldReadCounts.ts) do to a batch
 * before storing it: check each entry, add up the entries of one key (PostgreSQL's
 * `INSERT ... ON CONFLICT DO UPDATE` may touch a row only once per statement), and sort by key.
 */
import type { FieldReads } from './ports/fieldReadCounts';

const cmp = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The batch with one entry per (account, field, day); a malformed entry is a RangeError (the caller's bug). */
export function mergeFieldReads(batch: readonly FieldReads[]): FieldReads[] {
  const merged = new Map<string, FieldReads>();
  for (const e of batch) {
    if (!Number.isSafeInteger(e.reads) || e.reads <= 0) throw new RangeError(`field reads: reads must be a positive integer, got ${e.reads}`);
    if (!DAY.test(e.day)) throw new RangeError(`field reads: day must be YYYY-MM-DD, got "${e.day}"`);
    const key = `${e.accountId}\u0000${e.field}\u0000${e.day}`;
    const seen = merged.get(key);
    if (seen) seen.reads += e.reads;
    else merged.set(key, { ...e });
  }
  // In key order: concurrent batches then take their row locks in one order (no deadlock on PostgreSQL).
  return [...merged.values()].sort((x, y) => x.accountId - y.accountId || cmp(x.field, y.field) || cmp(x.day, y.day));
}
