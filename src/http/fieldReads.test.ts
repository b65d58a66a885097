import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore, type Account, type FieldReadCounts } from '../store';
import { Metrics } from './metrics';
import { FieldReadTally, OTHER_ACCOUNTS } from './fieldReads';

const NOW = Date.parse('2026-03-10T12:00:00Z');
let dir: string;
let store: SqliteStore;
let accounts: Account[];
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orderline-fieldreads-'));
  store = new SqliteStore(join(dir, 'orderline.sqlite'));
  await store.migrate();
  accounts = [];
  for (const name of ['a0', 'a1', 'a2', 'a3', 'a4']) accounts.push(await store.ensureAccount(name));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The counter's series as `account -> value` for one field. */
async function series(metrics: Metrics, field = 'discount_code'): Promise<Record<string, number>> {
  const { values } = await metrics.deprecatedReads.get();
  return Object.fromEntries(values.filter((v) => v.labels.field === field).map((v) => [String(v.labels.account), v.value]));
}

describe('FieldReadTally', () => {
  it('gives a series to at most topAccounts accounts; every other account counts in (other)', async () => {
    const metrics = new Metrics();
    const tally = new FieldReadTally(metrics.deprecatedReads, store, { topAccounts: 2, now: () => NOW });
    for (const [i, a] of accounts.entries()) for (let n = 0; n <= i; n++) tally.record(a, 'discount_code');
    expect(await series(metrics)).toEqual({ a0: 1, a1: 2, [OTHER_ACCOUNTS]: 3 + 4 + 5 });
    // A label once given is kept; the overflow stays in (other).
    tally.record(accounts[0], 'discount_code');
    tally.record(accounts[4], 'discount_code');
    expect(await series(metrics)).toEqual({ a0: 2, a1: 2, [OTHER_ACCOUNTS]: 13 });
    expect(tally.labelledAccounts()).toEqual(['a0', 'a1']);
  });

  it('with topAccounts 0, has one series per field', async () => {
    const metrics = new Metrics();
    const tally = new FieldReadTally(metrics.deprecatedReads, store, { topAccounts: 0, now: () => NOW });
    for (const a of accounts) tally.record(a, 'discount_code');
    expect(await series(metrics)).toEqual({ [OTHER_ACCOUNTS]: 5 });
  });

  it('writes nothing to the store until flush, then the exact count per account on the UTC day', async () => {
    const tally = new FieldReadTally(new Metrics().deprecatedReads, store, { topAccounts: 1, now: () => NOW });
    const before = store.queryCount;
    for (const [i, a] of accounts.entries()) for (let n = 0; n <= i; n++) tally.record(a, 'discount_code');
    expect(store.queryCount).toBe(before);
    await tally.flush();
    expect(await store.fieldReadTotals('2026-03-10', 10)).toEqual(accounts.map((a, i) => ({ account: a.name, field: 'discount_code', reads: i + 1 })).reverse());
    expect(await store.fieldReadTotals('2026-03-11', 10)).toEqual([]);
    // A second flush adds only what was read since.
    tally.record(accounts[0], 'discount_code');
    await tally.flush();
    await tally.flush();
    expect(await store.fieldReadTotals('2026-03-10', 10)).toContainEqual({ account: 'a0', field: 'discount_code', reads: 2 });
  });

  it('keeps the tallied reads when a flush fails, and stores them with the next one', async () => {
    let failing = true;
    const flaky: FieldReadCounts = {
      addFieldReads: (batch) => (failing ? Promise.reject(new Error('store down')) : store.addFieldReads(batch)),
      fieldReadTotals: (since, limit) => store.fieldReadTotals(since, limit),
    };
    const tally = new FieldReadTally(new Metrics().deprecatedReads, flaky, { topAccounts: 5, now: () => NOW });
    tally.record(accounts[1], 'discount_code');
    await expect(tally.flush()).rejects.toThrow('store down');
    tally.record(accounts[1], 'discount_code');
    failing = false;
    await tally.flush();
    expect(await store.fieldReadTotals('2026-01-01', 10)).toEqual([{ account: 'a1', field: 'discount_code', reads: 2 }]);
  });

  it('a flush asked for while another writes waits for it, then writes what that one could not: no read lost at shutdown', async () => {
    let failFirst!: (err: Error) => void;
    let calls = 0;
    const slow: FieldReadCounts = {
      addFieldReads: (batch) => (++calls === 1 ? new Promise((_, reject) => (failFirst = reject)) : store.addFieldReads(batch)),
      fieldReadTotals: (since, limit) => store.fieldReadTotals(since, limit),
    };
    const tally = new FieldReadTally(new Metrics().deprecatedReads, slow, { topAccounts: 5, now: () => NOW });
    tally.record(accounts[1], 'discount_code');
    const periodic = tally.flush(); // in flight: its reads are no longer pending
    let last = false;
    const final = tally.flush().then(() => (last = true));
    await new Promise((r) => setImmediate(r));
    expect([calls, last]).toEqual([1, false]); // the last flush waits for the one in flight
    failFirst(new Error('store slow'));
    await expect(periodic).rejects.toThrow('store slow');
    await final;
    expect(calls).toBe(2);
    expect(await store.fieldReadTotals('2026-01-01', 10)).toEqual([{ account: 'a1', field: 'discount_code', reads: 1 }]);
  });

  it('labels first the accounts that read most over the last 30 days (seed), then the first to read', async () => {
    await store.addFieldReads([
      { accountId: accounts[3].id, field: 'discount_code', day: '2026-03-09', reads: 50 },
      { accountId: accounts[4].id, field: 'discount_code', day: '2026-03-01', reads: 9 },
      { accountId: accounts[2].id, field: 'discount_code', day: '2026-01-01', reads: 999 }, // older than 30 days
    ]);
    const metrics = new Metrics();
    const tally = new FieldReadTally(metrics.deprecatedReads, store, { topAccounts: 3, now: () => NOW });
    await tally.seed();
    expect(tally.labelledAccounts()).toEqual(['a3', 'a4']);
    for (const a of accounts) tally.record(a, 'discount_code');
    expect(tally.labelledAccounts()).toEqual(['a3', 'a4', 'a0']);
    expect(await series(metrics)).toEqual({ a0: 1, a3: 1, a4: 1, [OTHER_ACCOUNTS]: 2 });
  });
});
