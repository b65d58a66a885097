import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { runAccountsContract } from '../ports/accounts.contract';
import { runFieldReadCountsContract } from '../ports/fieldReadCounts.contract';
import { runIdempotencyKeysContract } from '../ports/idempotencyKeys.contract';
import { runLifecycleContract } from '../ports/lifecycle.contract';
import { runOrdersContract } from '../ports/orders.contract';
import { setNote } from '../ports/fixtures.contract';
import { runSocialGraphContract } from '../ports/socialGraph.contract';
import { StoreUnavailableError } from '../errors';
import type { OrderFields } from '../store';
import { MIGRATIONS } from './migrations';
import { MAX_BATCH, SqliteStore } from './SqliteStore';

const dirs: string[] = [];
const freshFile = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-sqlite-'));
  dirs.push(dir);
  return join(dir, 'orderline.sqlite');
};
const fresh = async () => new SqliteStore(freshFile());
const migrated = async () => {
  const s = await fresh();
  await s.migrate();
  return s;
};
/** Two handles on one file: two processes sharing the embedded store (WORKERS=N). */
const twoHandles = async () => {
  const file = freshFile();
  const [a, b] = [new SqliteStore(file), new SqliteStore(file)];
  await a.migrate();
  await b.migrate();
  return { a, b, close: async () => void (await Promise.all([a.close(), b.close()])) };
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const fields: OrderFields = { status: 'pending', items: [{ sku: 'A', quantity: 1, unit_price_cents: 100 }], currency: 'EUR', discount: null, note: null };

// The real file, not :memory:, so WAL and locking are the production ones.
runLifecycleContract('SqliteStore (file)', fresh);
runAccountsContract('SqliteStore (file)', migrated);
runOrdersContract('SqliteStore (file)', migrated);
runSocialGraphContract('SqliteStore (file)', migrated);
runIdempotencyKeysContract('SqliteStore (two handles on one file)', twoHandles);
runFieldReadCountsContract('SqliteStore (two handles on one file)', twoHandles);

describe('SqliteStore specifics', () => {
  it('opens in WAL mode with synchronous FULL, foreign keys on and a short busy timeout (a longer wait for a lock is the group commit, off the event loop)', async () => {
    const s = await fresh();
    await s.migrate();
    expect(s.settings()).toEqual({ journalMode: 'wal', synchronous: 'full', foreignKeys: true, busyTimeoutMs: 20 });
    await s.close();
    const normal = new SqliteStore(freshFile(), 'normal');
    expect(normal.settings().synchronous).toBe('normal');
    await normal.close();
  });

  it('commits the order writes of one turn together, a failing one rolled back alone', async () => {
    const file = freshFile();
    const s = new SqliteStore(file);
    await s.migrate();
    const a = await s.ensureAccount('a');
    const { order: hot } = await s.createOrder(a.id, fields);
    const { order: blocked } = await s.createOrder(a.id, fields);
    // Another connection takes seq 2 of `blocked`: its write updates the row, then its event
    // row fails, after a statement of the write has run.
    const raw = new Database(file);
    raw.prepare("INSERT INTO order_events (order_id, seq, account_id, type, payload, created_at) VALUES (?, 2, ?, 'order.updated', '{}', 'x')").run(blocked.id, a.id);
    raw.close();
    const before = s.groupCommits;
    const settled = await Promise.allSettled([
      s.createOrder(a.id, { ...fields, note: 'c1' }),
      s.writeOrder(a.id, hot.id, setNote('w1')),
      s.writeOrder(a.id, blocked.id, setNote('lost')),
      s.writeOrder(a.id, hot.id, () => {
        throw new Error('boom');
      }),
      s.writeOrder(a.id, hot.id, () => ({ apply: false, reason: 'nope' as const })),
      s.writeOrder(a.id, hot.id, setNote('w2')),
      s.createOrder(a.id, { ...fields, note: 'c2' }),
    ]);
    expect(s.groupCommits - before).toBe(1);
    expect(settled.map((r) => (r.status === 'fulfilled' ? 'ok' : String((r.reason as Error).message).slice(0, 24)))).toEqual(['ok', 'ok', 'UNIQUE constraint failed', 'boom', 'ok', 'ok', 'ok']);
    expect(settled[4]).toEqual({ status: 'fulfilled', value: { ok: false, reason: 'nope' } });
    // In arrival order, each write on the row the previous one left.
    expect((await s.eventsAfter(hot.id, 0, 10)).map((e) => [e.seq, e.order.note])).toEqual([
      [1, null],
      [2, 'w1'],
      [3, 'w2'],
    ]);
    expect(await s.getOrder(a.id, blocked.id)).toEqual(blocked); // its update was rolled back with it
    await s.close();
  });

  it('fails the whole batch with the error that ended its transaction (SQLITE_FULL), writing none of it', async () => {
    const s = await migrated();
    const a = await s.ensureAccount('a');
    await s.createOrder(a.id, fields);
    // The file may grow by two pages only: the long note cannot be stored.
    const db = (s as unknown as { db: Database.Database }).db;
    db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true })) + 2}`);
    const settled = await Promise.allSettled([s.createOrder(a.id, fields), s.createOrder(a.id, { ...fields, note: 'x'.repeat(200_000) }), s.createOrder(a.id, fields)]);
    expect(settled.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : 'ok'))).toEqual(['SQLITE_FULL', 'SQLITE_FULL', 'SQLITE_FULL']);
    expect((await s.listOrders(a.id, 0, 10)).orders).toHaveLength(1);
    await s.close();
  });

  it('fails the writes of a file another connection holds locked past the busy timeout as unavailable, writing none of them', async () => {
    const file = freshFile();
    const s = new SqliteStore(file, 'full', 0);
    await s.migrate();
    const a = await s.ensureAccount('a');
    const { order } = await s.createOrder(a.id, fields);
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE'); // another process's write, not yet committed
    const settled = await Promise.allSettled([
      s.createOrder(a.id, fields),
      s.writeOrder(a.id, order.id, setNote('w')),
      s.claimIdempotencyKey(a.id, { key: 'k', fingerprint: 'f', now: Date.now(), lockMs: 1000, ttlMs: 60_000 }),
      s.revokeToken(a.id, 'sel'),
    ]);
    for (const r of settled) {
      expect(r.status).toBe('rejected');
      const reason = (r as PromiseRejectedResult).reason as Error & { engine?: string; cause?: { code?: string } };
      expect(reason).toBeInstanceOf(StoreUnavailableError);
      expect(reason.engine).toBe('sqlite');
      expect(reason.cause?.code).toMatch(/^SQLITE_BUSY/);
    }
    // Reads are not held up by a writer (WAL), and once the lock is free the same writes succeed.
    expect((await s.getOrder(a.id, order.id))?.revision).toBe(1);
    other.exec('ROLLBACK');
    other.close();
    expect((await s.listOrders(a.id, 0, 10)).orders).toHaveLength(1);
    expect((await s.writeOrder(a.id, order.id, setNote('w'))).ok).toBe(true);
    await s.close();
  });

  it('waits for a lock another connection holds without blocking the event loop, then writes in arrival order', async () => {
    const file = freshFile();
    const s = new SqliteStore(file, 'full', 600_000);
    await s.migrate();
    const a = await s.ensureAccount('a');
    const { order } = await s.createOrder(a.id, fields);
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    const settled: string[] = [];
    const writes = [
      s.writeOrder(a.id, order.id, setNote('first')).then((r) => settled.push(`write ${r.ok}`)),
      s.createOrder(a.id, fields).then(() => settled.push('create')),
      s.claimIdempotencyKey(a.id, { key: 'k', fingerprint: 'f', now: Date.now(), lockMs: 1000, ttlMs: 60_000 }).then((c) => settled.push(`claim ${c.kind}`)),
    ];
    // Timers and reads run while the writes wait (a synchronous wait in SQLite would hold this test until the lock is free).
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await s.getOrder(a.id, order.id))?.note).toBeNull();
    expect(settled).toEqual([]);
    other.exec('ROLLBACK');
    other.close();
    await Promise.all(writes);
    expect(settled).toEqual(['write true', 'create', 'claim claimed']);
    expect((await s.getOrder(a.id, order.id))?.note).toBe('first');
    await s.close();
  });

  it('fails the writes still waiting for a lock at close as unavailable, writing none of them', async () => {
    const file = freshFile();
    const s = new SqliteStore(file, 'full', 600_000);
    await s.migrate();
    const a = await s.ensureAccount('a');
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    const pending = s.createOrder(a.id, fields);
    await new Promise((r) => setTimeout(r, 20));
    await s.close();
    await expect(pending).rejects.toThrow(StoreUnavailableError);
    other.exec('ROLLBACK');
    expect(other.prepare('SELECT count(*) AS n FROM orders').get()).toEqual({ n: 0 });
    other.close();
  });

  it('commits the writes accepted before close, and answers them', async () => {
    const file = freshFile();
    const s = new SqliteStore(file);
    await s.migrate();
    const a = await s.ensureAccount('a');
    const pending = s.createOrder(a.id, fields);
    await s.close();
    const { order } = await pending;
    const again = new SqliteStore(file);
    await again.migrate();
    expect(await again.getOrder(a.id, order.id)).toEqual(order);
    await again.close();
    await expect(s.createOrder(a.id, fields)).rejects.toThrow(StoreUnavailableError);
  });

  it('keeps committed data across close and reopen of the file', async () => {
    const file = freshFile();
    const s = new SqliteStore(file);
    await s.migrate();
    const a = await s.ensureAccount('a');
    const { order } = await s.createOrder(a.id, fields);
    await s.close();
    const again = new SqliteStore(file);
    await again.migrate();
    expect(await again.getOrder(a.id, order.id)).toEqual(order);
    await again.close();
  });

  it('finds every read through an index (no full scan of a stored table)', async () => {
    const s = await fresh();
    await s.migrate();
    const batch = { ids: '["u1","u2"]', first: 2, cap: 4 };
    const plans = {
      friendsOf: s.explain('friendsOf', [batch]),
      postsOf: s.explain('postsOf', [batch]),
      commentsOf: s.explain('commentsOf', [batch]),
      ordersOfAccounts: s.explain('ordersOfAccounts', [{ ...batch, ids: '[1,2]', after: 0 }]),
      usersByIds: s.explain('usersByIds', ['["u1"]', 1]),
      listOrders: s.explain('listOrders', [1, 0, 10]),
      eventsAfter: s.explain('eventsAfter', [1, 0, 10]),
      getOrder: s.explain('getOrder', [1, 1]),
      tokenBySelector: s.explain('tokenBySelector', ['x']),
      accountByName: s.explain('accountByName', ['x']),
      userOfAccount: s.explain('userOfAccount', [1]),
      userById: s.explain('userById', ['u1']),
      friendsOfOne: s.explain('friendsOfOne', ['u1', 2]),
      postsOfOne: s.explain('postsOfOne', ['u1', 2]),
      commentsOfOne: s.explain('commentsOfOne', ['p1', 2]),
      ordersOfOne: s.explain('ordersOfOne', [1, 0, 2]),
    };
    for (const [name, plan] of Object.entries(plans)) {
      // Scanning the JSON array of ids (json_each, `j`) or a subquery is fine; a stored table is not.
      const scans = plan.filter((d) => /^SCAN /.test(d) && !/^SCAN (json_each|j\b|\(subquery)/.test(d));
      expect({ name, scans }).toEqual({ name, scans: [] });
      expect(plan.some((d) => /^SEARCH /.test(d))).toBe(true);
    }
    await s.close();
  });

  it('answers a batch of one parent (its own statement) exactly as the same parent inside a larger batch', async () => {
    const s = await fresh();
    await s.migrate();
    await s.seedDemo();
    const demo = await s.ensureAccount('demo');
    const before = s.queryCount;
    for (const first of [0, 1, 3, 100]) {
      for (const id of ['u1', 'u2', 'u12', 'nope']) {
        expect(await s.friendsOf([id], first)).toEqual([(await s.friendsOf([id, 'u3'], first))[0]]);
        expect(await s.postsOf([id], first)).toEqual([(await s.postsOf([id, 'u3'], first))[0]]);
        expect(await s.usersByIds([id])).toEqual([(await s.usersByIds([id, 'u3']))[0]]);
      }
      const post = (await s.postsOf(['u1'], 1))[0][0].id;
      expect(await s.commentsOf([post], first)).toEqual([(await s.commentsOf([post, 'nope'], first))[0]]);
      expect(await s.ordersOfAccounts([demo.id], first)).toEqual([(await s.ordersOfAccounts([demo.id, 999], first))[0]]);
    }
    expect(s.queryCount - before).toBe(4 * 4 * 6 + 4 * (1 + 2 + 2)); // still one statement per call
    await s.close();
  });

  it('refuses a batch larger than MAX_BATCH rather than answering part of it', async () => {
    const s = await fresh();
    await s.migrate();
    const ids = Array.from({ length: MAX_BATCH + 1 }, (_, i) => `u${i}`);
    await expect(s.usersByIds(ids)).rejects.toThrow(RangeError);
    await expect(s.friendsOf(ids, 1)).rejects.toThrow(RangeError);
    expect(await s.usersByIds(ids.slice(0, MAX_BATCH))).toHaveLength(MAX_BATCH);
    await s.close();
  });

  it('upgrades a database made by the first release (migration 1 only), keeping its orders', async () => {
    const file = freshFile();
    const old = new Database(file);
    old.exec('CREATE TABLE schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    old.exec(MIGRATIONS[0].sql);
    old.prepare('INSERT INTO schema_migrations VALUES (1, ?, ?)').run(MIGRATIONS[0].name, '2026-01-01T00:00:00.000Z');
    old.prepare("INSERT INTO accounts (id, name, created_at) VALUES (1, 'demo', '2026-01-01T00:00:00.000Z')").run();
    old.prepare("INSERT INTO tokens (token_hash, account_id, created_at) VALUES (?, 1, '2026-01-01T00:00:00.000Z')").run('f'.repeat(64));
    old.close();

    const s = new SqliteStore(file);
    await s.migrate();
    const demo = await s.ensureAccount('demo');
    expect(demo.id).toBe(1);
    await s.addToken(demo.id, 'selector-0000001', 'e'.repeat(64));
    expect(await s.tokenBySelector('selector-0000001')).toEqual({ account: demo, verifierHash: 'e'.repeat(64) });
    expect(await s.seedDemo()).toBe(true);
    await s.close();
  });

  it('loads the demo data once when two connections share the file', async () => {
    const file = freshFile();
    const a = new SqliteStore(file);
    const b = new SqliteStore(file);
    await a.migrate();
    await b.migrate();
    expect(await Promise.all([a.seedDemo(), b.seedDemo()])).toEqual([true, false]);
    await a.close();
    await b.close();
  });

  it('loses no update when four processes write the same order at once', async () => {
    const file = freshFile();
    const s = new SqliteStore(file);
    await s.migrate();
    const account = await s.ensureAccount('a');
    const { order } = await s.createOrder(account.id, fields);
    const perProcess = 200;
    const startAt = Date.now() + 2000; // all children start writing together, after their startup
    // Each child appends its tag to the note: a lost update would drop a tag and a revision.
    const child = (tag: string) =>
      new Promise<void>((resolve, reject) => {
        const code = `
          const { SqliteStore } = require(${JSON.stringify(join(__dirname, 'SqliteStore.ts'))});
          (async () => {
            const s = new SqliteStore(${JSON.stringify(file)});
            await s.migrate();
            await new Promise((r) => setTimeout(r, Math.max(0, ${startAt} - Date.now())));
            for (let i = 0; i < ${perProcess}; i++) {
              const r = await s.writeOrder(${account.id}, ${order.id}, (cur) => ({
                apply: true, eventType: 'order.updated',
                fields: { ...cur, note: (cur.note ?? '') + ${JSON.stringify(tag)} },
              }));
              if (!r.ok) throw new Error('refused');
            }
            await s.close();
          })().catch((e) => { console.error(e); process.exit(1); });`;
        const p = spawn(process.execPath, ['--require', 'tsx/cjs', '-e', code], { stdio: ['ignore', 'ignore', 'inherit'] });
        p.once('error', reject);
        p.once('exit', (c) => (c === 0 ? resolve() : reject(new Error(`writer ${tag} exited with ${c}`))));
      });
    await Promise.all(['a', 'b', 'c', 'd'].map(child));
    const final = (await s.getOrder(account.id, order.id))!;
    expect(final.revision).toBe(1 + 4 * perProcess);
    for (const tag of ['a', 'b', 'c', 'd']) expect(final.note!.split('').filter((c) => c === tag)).toHaveLength(perProcess);
    const events = await s.eventsAfter(order.id, 0, 1000);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 1 + 4 * perProcess }, (_, i) => i + 1));
    await s.close();
  });
});

describe('SqliteStore reads: one read transaction per turn', () => {
  it('answers the reads asked in one turn from one transaction, each as it would alone', async () => {
    const s = await migrated();
    await s.seedDemo();
    const a = await s.ensureAccount('a');
    const { order } = await s.createOrder(a.id, fields);
    const alone = [await s.orderRevision(a.id, order.id), await s.getOrder(a.id, order.id), await s.listOrders(a.id, 0, 5), await s.friendsOf(['u1'], 3), await s.eventsAfter(order.id, 0, 5)];
    expect(s.sharedReads).toBe(0); // a lone read runs on its own
    const together = await Promise.all([s.orderRevision(a.id, order.id), s.getOrder(a.id, order.id), s.listOrders(a.id, 0, 5), s.friendsOf(['u1'], 3), s.eventsAfter(order.id, 0, 5)]);
    expect(together).toEqual(alone);
    expect(s.sharedReads).toBe(1);
    // A long turn takes a fresh transaction every 256 reads (no snapshot held for long).
    expect(new Set(await Promise.all(Array.from({ length: 600 }, () => s.orderRevision(a.id, order.id))))).toEqual(new Set([1]));
    expect(s.sharedReads).toBe(1 + 3);
    await s.close();
  });

  it('answers each turn with what was committed when its last read was asked, turn after turn', async () => {
    // A raw connection on the same file stands for another process: its commits are
    // synchronous, so they can fall between two reads asked in one turn, and between turns.
    // Each turn's reads must see exactly what was committed when the turn's asking ended:
    // not less (a snapshot taken at the first read, or kept from an earlier turn), and all
    // the same (one snapshot).
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(fc.constantFrom('read', 'write'), { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 5 }), async (turns) => {
        const file = freshFile();
        const s = new SqliteStore(file);
        await s.migrate();
        const a = await s.ensureAccount('a');
        const { order } = await s.createOrder(a.id, fields);
        const raw = new Database(file);
        const bump = raw.prepare('UPDATE orders SET revision = revision + 1 WHERE id = ?');
        let committed = 1;
        try {
          for (const steps of turns) {
            const asked: Promise<number | null>[] = [];
            for (const step of steps) {
              if (step === 'write') committed += bump.run(order.id).changes;
              else asked.push(s.orderRevision(a.id, order.id));
            }
            expect(await Promise.all(asked)).toEqual(asked.map(() => committed));
            committed += bump.run(order.id).changes; // between turns
          }
        } finally {
          raw.close();
          await s.close();
        }
      }),
      { numRuns: 40 },
    );
  });

  it('rejects a failing read alone, and leaves no transaction open: what it acknowledges is committed', async () => {
    const file = freshFile();
    const s = new SqliteStore(file);
    await s.migrate();
    const a = await s.ensureAccount('a');
    const { order } = await s.createOrder(a.id, fields);
    const tooMany = Array.from({ length: MAX_BATCH + 1 }, (_, i) => `u${i}`);
    const settled = await Promise.allSettled([s.orderRevision(a.id, order.id), s.friendsOf(tooMany, 1), s.writeOrder(a.id, order.id, setNote('w')), s.getOrder(a.id, order.id)]);
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(RangeError);
    expect(await Promise.all([s.orderRevision(a.id, order.id), s.usersByIds(tooMany), s.writeOrder(a.id, order.id, setNote('again'))]).catch((e: Error) => e.name)).toBe('RangeError');
    expect(await Promise.all([s.orderRevision(a.id, order.id), s.orderRevision(a.id, order.id + 1)])).toEqual([3, null]);
    // Another connection sees both acknowledged writes: neither was left inside an open transaction.
    const raw = new Database(file, { readonly: true });
    expect(raw.prepare('SELECT revision, note FROM orders WHERE id = ?').get(order.id)).toEqual({ revision: 3, note: 'again' });
    raw.close();
    expect(s.sharedReads).toBe(3);
    await s.close();
  });

  it('answers the reads asked before close, and refuses those asked after', async () => {
    const s = await migrated();
    const a = await s.ensureAccount('a');
    const { order } = await s.createOrder(a.id, fields);
    const asked = [s.orderRevision(a.id, order.id), s.getOrder(a.id, order.id)];
    await s.close();
    expect(await Promise.all(asked)).toEqual([1, order]);
    await expect(s.orderRevision(a.id, order.id)).rejects.toThrow(StoreUnavailableError);
    await expect(s.orderRevision(a.id, order.id)).rejects.toThrow(/not open/);
  });
});
