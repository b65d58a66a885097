import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { Pool } from 'pg';
import { runAccountsContract } from '../ports/accounts.contract';
import { runFieldReadCountsContract } from '../ports/fieldReadCounts.contract';
import { runIdempotencyKeysContract } from '../ports/idempotencyKeys.contract';
import { runLifecycleContract } from '../ports/lifecycle.contract';
import { runOrdersContract } from '../ports/orders.contract';
import { setNote, statementsOf } from '../ports/fixtures.contract';
import { runSocialGraphContract } from '../ports/socialGraph.contract';
import type { OrderFields, OrderRecord, Store } from '../store';
import { StoreInputError, StoreUnavailableError } from '../errors';
import { SqliteStore, MAX_BATCH as SQLITE_MAX_BATCH, MAX_ROWS as SQLITE_MAX_ROWS } from '../sqlite/SqliteStore';
import { MAX_BATCH, MAX_ROWS, PostgresStore, openPostgresStore } from './PostgresStore';
import { MIGRATIONS } from './migrations';

// CI exports DATABASE_TEST_URL; the default is this repository's local setup (trust auth).
// Never skipped: an unreachable server fails every test of this file, saying why.
const URL = process.env.DATABASE_TEST_URL || 'postgres://postgres@127.0.0.1:5432/test';

const admin = new Pool({ connectionString: URL, max: 2, connectionTimeoutMillis: 5000 });
const schemas = new Set<string>();
/** A fresh, unique schema name: parallel jest workers and test cases never share tables. */
const newSchema = (): string => {
  const s = `orderline_test_${randomBytes(6).toString('hex')}`;
  schemas.add(s);
  return s;
};
const dropSchema = async (s: string): Promise<void> => {
  await admin.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  schemas.delete(s);
};

/** A store on its own schema, dropped when the store is closed. */
class TestStore extends PostgresStore {
  constructor(
    readonly schemaName = newSchema(),
    max?: number,
  ) {
    super(URL, { schema: schemaName, max });
  }
  override async close(): Promise<void> {
    await super.close();
    if (schemas.has(this.schemaName)) await dropSchema(this.schemaName);
  }
}

beforeAll(async () => {
  try {
    await admin.query('SELECT 1');
  } catch (err) {
    throw new Error(
      `PostgreSQL tests need a server at DATABASE_TEST_URL (${URL.replace(/:[^:@/]*@/, ':***@')}): ${(err as Error).message}. ` + 'Start PostgreSQL or point DATABASE_TEST_URL at one; these tests are never skipped.',
      { cause: err },
    );
  }
});
afterAll(async () => {
  for (const s of [...schemas]) await dropSchema(s); // stores a failed test left open
  await admin.end();
});

const fields: OrderFields = { status: 'pending', items: [{ sku: 'A', quantity: 1, unit_price_cents: 100 }], currency: 'EUR', discount: null, note: null };

const migrated = async () => {
  const s = new TestStore();
  await s.migrate();
  return s;
};
runLifecycleContract('PostgresStore', async () => new TestStore());
runAccountsContract('PostgresStore', migrated);
runOrdersContract('PostgresStore', migrated);
runSocialGraphContract('PostgresStore', migrated);
// Two pools on one schema: two instances sharing the database.
runIdempotencyKeysContract('PostgresStore (two pools on one schema)', async () => {
  const a = new TestStore();
  const b = new PostgresStore(URL, { schema: a.schemaName });
  await a.migrate();
  await b.migrate();
  return { a, b, close: async () => void (await b.close(), await a.close()) };
});

runFieldReadCountsContract('PostgresStore (two pools on one schema)', async () => {
  const a = new TestStore();
  const b = new PostgresStore(URL, { schema: a.schemaName });
  await a.migrate();
  await b.migrate();
  return { a, b, close: async () => void (await b.close(), await a.close()) };
});

describe('PostgresStore specifics', () => {
  it('tells onError of an idle connection the server dropped, and keeps serving', async () => {
    const errors: Error[] = [];
    const s = new PostgresStore(URL, { max: 1, onError: (err) => errors.push(err) });
    const pool = (s as unknown as { pool: Pool }).pool;
    const client = await pool.connect();
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    client.release(); // idle in the pool now
    // As a server restart or failover does: the server ends the idle connection.
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(Error);
    expect(await s.ping()).toBe(true); // a new connection serves the next query
    await s.close();
  });

  it('uses the same batch and row bounds as SqliteStore', () => {
    expect({ MAX_BATCH, MAX_ROWS }).toEqual({ MAX_BATCH: SQLITE_MAX_BATCH, MAX_ROWS: SQLITE_MAX_ROWS });
  });

  it('applies exactly one of 20 concurrent writes on the same revision across two stores (two pools)', async () => {
    const a = new TestStore();
    const b = new PostgresStore(URL, { schema: a.schemaName });
    await Promise.all([a.migrate(), b.migrate()]);
    const account = await a.ensureAccount('a');
    const { order } = await a.createOrder(account.id, fields);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a : b).writeOrder(account.id, order.id, (cur) => (cur.revision === 1 ? { apply: true, eventType: 'order.updated', fields: { ...cur, note: `w${i}` } } : { apply: false, reason: 'stale' as const })),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect((await b.eventsAfter(order.id, 0, 100)).map((e) => e.seq)).toEqual([1, 2]);
    await b.close();
    await a.close();
  });

  it('loses no update when two stores append to the same order at once', async () => {
    const a = new TestStore();
    const b = new PostgresStore(URL, { schema: a.schemaName, max: 4 });
    await a.migrate();
    const account = await a.ensureAccount('a');
    const { order } = await a.createOrder(account.id, fields);
    const perStore = 60;
    // Each write appends its store's tag to the note: a lost update would drop a tag and a revision.
    const append = (s: Store, tag: string) =>
      Promise.all(Array.from({ length: perStore }, () => s.writeOrder(account.id, order.id, (cur) => ({ apply: true, eventType: 'order.updated', fields: { ...cur, note: (cur.note ?? '') + tag } }))));
    await Promise.all([append(a, 'a'), append(b, 'b')]);
    const final = (await a.getOrder(account.id, order.id))!;
    expect(final.revision).toBe(1 + 2 * perStore);
    for (const tag of ['a', 'b']) expect(final.note!.split('').filter((c) => c === tag)).toHaveLength(perStore);
    const events = await a.eventsAfter(order.id, 0, 1000);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 1 + 2 * perStore }, (_, i) => i + 1));
    expect(events.map((e) => e.order.revision)).toEqual(events.map((e) => e.seq));
    await b.close();
    await a.close();
  });

  it('writes an order with its event in one statement, and queued writes of one order one statement each', async () => {
    const s = await migrated();
    const account = await s.ensureAccount('a');
    const count = (run: () => Promise<unknown>) => statementsOf(s, run);
    let order: OrderRecord | undefined;
    expect(await count(async () => ({ order } = await s.createOrder(account.id, fields)))).toBe(1);
    // Alone: read, then compare-and-set with the event row.
    expect(await count(() => s.writeOrder(account.id, order!.id, setNote('one')))).toBe(2);
    // Ten at once in this process: one read, then each decides on the row the previous one wrote.
    expect(await count(() => Promise.all(Array.from({ length: 10 }, (_, i) => s.writeOrder(account.id, order!.id, setNote(`w${i}`)))))).toBe(11);
    const events = await s.eventsAfter(order!.id, 0, 100);
    expect(events.map((e) => [e.seq, e.order.note])).toEqual([[1, null], [2, 'one'], ...Array.from({ length: 10 }, (_, i) => [3 + i, `w${i}`])]);
    // A refusal decided on the remembered row is decided again on the row as read.
    const calls: number[] = [];
    const refuse = (cur: OrderRecord) => (calls.push(cur.revision), { apply: false as const, reason: 'nope' as const });
    const queued = await count(() => Promise.all([s.writeOrder(account.id, order!.id, setNote('before')), s.writeOrder(account.id, order!.id, refuse)]));
    expect([queued, calls]).toEqual([3, [13, 13]]); // read + write, then one read for the refusal
    // Another account's write in the same queue is not_found, and changes nothing.
    const other = await s.ensureAccount('b');
    const [mine, theirs] = await Promise.all([s.writeOrder(account.id, order!.id, setNote('mine')), s.writeOrder(other.id, order!.id, setNote('theirs'))]);
    expect([mine.ok, theirs]).toEqual([true, { ok: false, reason: 'not_found' }]);
    expect((await s.getOrder(account.id, order!.id))?.note).toBe('mine');
    await s.close();
  });

  it("sends one turn's revision reads as one statement, and a lone read as the single-row one", async () => {
    const s = await migrated();
    const [a, b] = [await s.ensureAccount('a'), await s.ensureAccount('b')];
    const ids = [(await s.createOrder(a.id, fields)).order.id, (await s.createOrder(a.id, fields)).order.id];
    const reads = () => Promise.all([...ids, ...ids].flatMap((id) => [s.orderRevision(a.id, id), s.orderRevision(b.id, id)]));
    let got: (number | null)[] = [];
    expect(await statementsOf(s, async () => void (got = await reads()))).toBe(1);
    expect(got).toEqual([1, null, 1, null, 1, null, 1, null]);
    expect(await statementsOf(s, () => s.orderRevision(a.id, ids[0]))).toBe(1);
    await s.close();
  });

  it('answers the revision reads asked for before close, then closes', async () => {
    const s = await migrated();
    const a = await s.ensureAccount('a');
    const { order } = await s.createOrder(a.id, fields);
    const asked = [s.orderRevision(a.id, order.id), s.orderRevision(a.id, order.id + 1000), s.orderRevision(Number.MAX_SAFE_INTEGER + 2, order.id)];
    await s.close();
    expect(await Promise.all(asked)).toEqual([1, null, null]);
  });

  it("fails every revision read of a turn's statement when the server cannot be reached", async () => {
    const s = new PostgresStore('postgres://postgres@127.0.0.1:1/none', { connectionTimeoutMillis: 1000 });
    const settled = await Promise.allSettled([1, 2, 3].map((id) => s.orderRevision(1, id)));
    expect(settled.map((r) => r.status === 'rejected' && r.reason instanceof StoreUnavailableError)).toEqual([true, true, true]);
    expect(s.queryCount).toBe(1);
    await s.close();
  });

  it("keeps another account's writes of an order out of the owner's turn", async () => {
    const s = await migrated();
    const [owner, other] = [await s.ensureAccount('a'), await s.ensureAccount('b')];
    const { order } = await s.createOrder(owner.id, fields);
    // Another connection holds the row lock: the owner's compare-and-set waits for it.
    const c = await admin.connect();
    await c.query('BEGIN');
    await c.query(`SELECT 1 FROM "${s.schemaName}".orders WHERE id = $1 FOR UPDATE`, [order.id]);
    const mine = s.writeOrder(owner.id, order.id, setNote('mine'));
    // Not queued behind the owner's write: answered while that one still waits.
    expect(await s.writeOrder(other.id, order.id, setNote('theirs'))).toEqual({ ok: false, reason: 'not_found' });
    await c.query('COMMIT');
    c.release();
    expect(await mine).toMatchObject({ ok: true, order: { revision: 2, note: 'mine' } });
    await s.close();
  });

  it('fails the writes queued behind one the server could not take, without sending them', async () => {
    const s = new PostgresStore('postgres://postgres@127.0.0.1:1/none', { connectionTimeoutMillis: 1000 });
    const settled = await Promise.allSettled(Array.from({ length: 5 }, () => s.writeOrder(1, 1, () => ({ apply: false, reason: 'nope' as const }))));
    expect(settled.map((r) => r.status === 'rejected' && r.reason instanceof StoreUnavailableError)).toEqual(Array(5).fill(true));
    expect(s.queryCount).toBe(1);
    await s.close();
  });

  it('fails a statement the server stops answering (a partition) with StoreUnavailableError after queryTimeoutMillis, reads and writes, and serves again after', async () => {
    // A TCP proxy in front of PostgreSQL that can stop passing bytes either way, as a partition does.
    let frozen = false;
    const held: Socket[] = [];
    const proxy = createServer((client) => {
      const server = connect(Number(new globalThis.URL(URL).port || 5432), new globalThis.URL(URL).hostname);
      held.push(client, server);
      const pass = (from: Socket, to: Socket) => from.on('data', (d: Buffer) => void (frozen || to.write(d)));
      pass(client, server);
      pass(server, client);
      const end = () => (client.destroy(), server.destroy());
      client.on('error', end).on('close', end);
      server.on('error', end).on('close', end);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const via = new globalThis.URL(URL);
    via.hostname = '127.0.0.1';
    via.port = String((proxy.address() as AddressInfo).port);
    const schema = newSchema();
    let recovered = 0;
    const s = new PostgresStore(via.toString(), { schema, queryTimeoutMillis: 300, connectionTimeoutMillis: 1000, onRecovered: () => recovered++ });
    try {
      await s.migrate();
      const account = await s.ensureAccount('part');
      const { order } = await s.createOrder(account.id, fields);
      frozen = true;
      await expect(s.getOrder(account.id, order.id)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(s.writeOrder(account.id, order.id, setNote('lost'))).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(recovered).toBe(0);
      frozen = false;
      // The connections that met the partition were dropped; new ones serve.
      expect((await s.getOrder(account.id, order.id))?.revision).toBe(order.revision);
      expect(await s.writeOrder(account.id, order.id, setNote('after'))).toMatchObject({ ok: true });
      expect(recovered).toBe(1); // the first statement that answered after the outage said so, once
    } finally {
      frozen = false;
      await s.close();
      await dropSchema(schema);
      for (const sock of held) sock.destroy();
      await new Promise((r) => proxy.close(r));
    }
  });

  it('migrates once when four stores migrate the same fresh schema at once', async () => {
    const first = new TestStore();
    const others = [1, 2, 3].map(() => new PostgresStore(URL, { schema: first.schemaName }));
    await Promise.all([first, ...others].map((s) => s.migrate()));
    const { rows } = await admin.query(`SELECT id FROM "${first.schemaName}".schema_migrations ORDER BY id`);
    expect(rows.map((r) => r.id)).toEqual(MIGRATIONS.map((m) => m.id));
    await Promise.all(others.map((s) => s.migrate())); // and again, now with nothing to do
    for (const s of others) await s.close();
    await first.close();
  });

  it('loads the demo data once when two stores seed the same schema at once', async () => {
    const a = new TestStore();
    const b = new PostgresStore(URL, { schema: a.schemaName });
    await a.migrate();
    const loaded = await Promise.all([a.seedDemo(), b.seedDemo()]);
    expect(loaded.sort()).toEqual([false, true]);
    const { rows } = await admin.query(`SELECT count(*)::int AS n FROM "${a.schemaName}".users`);
    expect(rows[0].n).toBe(12);
    await b.close();
    await a.close();
  });

  it('keeps committed data across close and a new pool on the same schema', async () => {
    const a = new TestStore();
    await a.migrate();
    const account = await a.ensureAccount('a');
    const { order } = await a.createOrder(account.id, fields);
    const b = new PostgresStore(URL, { schema: a.schemaName });
    await b.migrate();
    expect(await b.getOrder(account.id, order.id)).toEqual(order);
    await b.close();
    await a.close();
  });

  it('answers the graph and order reads exactly as SqliteStore does on the demo data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orderline-pg-vs-sqlite-'));
    const lite = new SqliteStore(join(dir, 'o.sqlite'));
    const pg = new TestStore();
    try {
      await Promise.all([lite.migrate(), pg.migrate()]);
      await Promise.all([lite.seedDemo(), pg.seedDemo()]);
      // Timestamps are each store's own clock; everything else must be equal.
      const untimed = (o: OrderRecord) => ({ ...o, createdAt: undefined, updatedAt: undefined });
      const reads = async (s: Store) => {
        const users = Array.from({ length: 12 }, (_, i) => `u${i + 1}`);
        const posts = (await s.postsOf(users, 100)).flat().map((p) => p.id);
        return {
          users: await s.usersByIds([...users, 'nope']),
          friends: await s.friendsOf(users, 3),
          posts: await s.postsOf(users, 2),
          comments: await s.commentsOf(posts, 2),
          orders: (await s.ordersOfAccounts([1, 2, 3], 4)).map((l) => l.map(untimed)),
          events: (await s.eventsAfter(1, 0, 10)).map((e) => ({ ...e, createdAt: undefined, order: untimed(e.order) })),
        };
      };
      expect(await reads(pg)).toEqual(await reads(lite));
    } finally {
      await lite.close();
      await pg.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds every read through an index (no sequential scan of a stored table)', async () => {
    const s = new TestStore();
    await s.migrate();
    const plans = {
      friendsOf: await s.explain('friendsOf', [['u1', 'u2'], 2, 4]),
      postsOf: await s.explain('postsOf', [['u1', 'u2'], 2, 4]),
      commentsOf: await s.explain('commentsOf', [['p1-1'], 2, 2]),
      ordersOfAccounts: await s.explain('ordersOfAccounts', [[1, 2], 2, 4, 0]),
      usersByIds: await s.explain('usersByIds', [['u1'], 1]),
      listOrders: await s.explain('listOrders', [1, 0, 10]),
      eventsAfter: await s.explain('eventsAfter', [1, 0, 10]),
      getOrder: await s.explain('getOrder', [1, 1]),
      orderRevisions: await s.explain('orderRevisions', [
        [1, 2],
        [1, 1],
      ]),
      lockOrder: await s.explain('lockOrder', [1, 1]),
      tokenBySelector: await s.explain('tokenBySelector', ['x']),
      accountByName: await s.explain('accountByName', ['x']),
      userOfAccount: await s.explain('userOfAccount', [1]),
    };
    for (const [name, plan] of Object.entries(plans)) {
      expect({ name, scans: plan.filter((line) => /Seq Scan/.test(line)) }).toEqual({ name, scans: [] });
      expect(plan.some((line) => /Index (Only )?Scan|Bitmap Index Scan/.test(line))).toBe(true);
    }
    await s.close();
  });

  it('refuses a batch larger than MAX_BATCH rather than answering part of it', async () => {
    const s = new TestStore();
    await s.migrate();
    const ids = Array.from({ length: MAX_BATCH + 1 }, (_, i) => `u${i}`);
    await expect(s.usersByIds(ids)).rejects.toThrow(RangeError);
    await expect(s.friendsOf(ids, 1)).rejects.toThrow(RangeError);
    await expect(
      s.ordersOfAccounts(
        ids.map((_, i) => i),
        1,
      ),
    ).rejects.toThrow(RangeError);
    expect(await s.usersByIds(ids.slice(0, MAX_BATCH))).toHaveLength(MAX_BATCH);
    await s.close();
  });

  it('returns numbers for ids and millisecond ISO strings for times, the same in the stored event', async () => {
    const s = new TestStore();
    await s.migrate();
    const account = await s.ensureAccount('a');
    expect(typeof account.id).toBe('number');
    const { order } = await s.createOrder(account.id, fields);
    expect(typeof order.id).toBe('number');
    expect(order.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(order.createdAt) - Date.now())).toBeLessThan(60_000);
    const w = await s.writeOrder(account.id, order.id, (cur) => ({ apply: true, eventType: 'order.updated', fields: { ...cur, note: 'x' } }));
    if (!w.ok) throw new Error('refused');
    expect(w.order.updatedAt >= order.updatedAt).toBe(true);
    expect(w.event.createdAt).toBe(w.order.updatedAt);
    expect(await s.eventsAfter(order.id, 0, 10)).toEqual([{ orderId: order.id, accountId: account.id, seq: 1, type: 'order.created', order, createdAt: order.createdAt }, w.event]);
    await s.close();
  });

  it("refuses U+0000 as the caller's input (StoreInputError, no HTTP fields) and stores nothing; ids with it match nothing", async () => {
    const s = new TestStore();
    await s.migrate();
    const account = await s.ensureAccount('a');
    const err = await s.createOrder(account.id, { ...fields, note: 'a\u0000b' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreInputError);
    expect(err).toMatchObject({ name: 'StoreInputError', reason: 'unstorable_text' });
    expect(err).not.toHaveProperty('status');
    expect(err).not.toHaveProperty('expose');
    await expect(s.createOrder(account.id, { ...fields, items: [{ sku: '\u0000', quantity: 1, unit_price_cents: 1 }] })).rejects.toThrow(StoreInputError);
    const { order } = await s.createOrder(account.id, fields);
    await expect(s.writeOrder(account.id, order.id, (cur) => ({ apply: true, eventType: 'order.updated', fields: { ...cur, note: '\u0000' } }))).rejects.toThrow(StoreInputError);
    expect(await s.getOrder(account.id, order.id)).toEqual(order);
    expect((await s.listOrders(account.id, 0, 10)).orders).toEqual([order]);
    expect(await s.usersByIds(['u\u0000', 'u1'])).toEqual([null, null]);
    expect(await s.friendsOf(['u\u0000'], 3)).toEqual([[]]);
    expect(await s.tokenBySelector('\u0000')).toBeNull();
    await s.close();
  });

  it('stores a lone UTF-16 surrogate in an item as U+FFFD, as text columns do, instead of failing', async () => {
    const s = new TestStore();
    await s.migrate();
    const account = await s.ensureAccount('a');
    const { order } = await s.createOrder(account.id, { ...fields, items: [{ sku: 'a\ud800b', quantity: 1, unit_price_cents: 1 }] });
    expect(order.items[0].sku).toBe('a\ufffdb');
    expect(await s.getOrder(account.id, order.id)).toEqual(order);
    await s.close();
  });

  it('returns every connection to the pool when decide throws', async () => {
    const s = new TestStore(undefined, 2);
    await s.migrate();
    const account = await s.ensureAccount('a');
    const { order } = await s.createOrder(account.id, fields);
    for (let i = 0; i < 10; i++) {
      await expect(
        s.writeOrder(account.id, order.id, () => {
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
    }
    // With a pool of 2, a leaked connection would make this wait for connectionTimeoutMillis and fail.
    expect(await s.writeOrder(account.id, order.id, (cur) => ({ apply: true, eventType: 'order.updated', fields: { ...cur, note: 'ok' } }))).toMatchObject({
      ok: true,
    });
    await s.close();
  });

  it('answers not found for ids no row can have, without a query error', async () => {
    const s = new TestStore();
    await s.migrate();
    const account = await s.ensureAccount('a');
    expect(await s.getOrder(account.id, 1.5)).toBeNull();
    expect(await s.getOrder(account.id, 2 ** 60)).toBeNull();
    expect(await s.writeOrder(account.id, Number.NaN, () => ({ apply: false, reason: 'x' }))).toEqual({ ok: false, reason: 'not_found' });
    expect(await s.eventsAfter(1, Number.POSITIVE_INFINITY, 10)).toEqual([]);
    expect(await s.listOrders(account.id, 1e300, 10)).toEqual({ orders: [], hasMore: false });
    expect(await s.ordersOfAccounts([1.5, account.id], 2)).toEqual([[], []]);
    await s.close();
  });

  it('openPostgresStore resolves with a reachable store and rejects, without the password, for an unreachable one', async () => {
    const ok = await openPostgresStore(URL);
    expect(await ok.ping()).toBe(true);
    await ok.close();
    expect(await ok.ping()).toBe(false); // closed: not ready
    const started = Date.now();
    const err = (await openPostgresStore('postgres://u:s3cret@127.0.0.1:1/nope').catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(/^PostgreSQL is not reachable: /);
    expect(err.message).not.toContain('s3cret');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('refuses a schema name that is not a plain lowercase identifier', () => {
    expect(() => new PostgresStore(URL, { schema: 'x"; DROP TABLE users; --' })).toThrow(RangeError);
    expect(() => new PostgresStore(URL, { schema: 'Mixed' })).toThrow(RangeError);
  });
});
