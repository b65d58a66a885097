/**
 * The Store port on an embedded SQLite file (better-sqlite3, WAL).
 *
 * better-sqlite3 is synchronous: every statement blocks the event loop while it runs,
 * so every query here is bounded by an index and a LIMIT (spec 1.5), and statements
 * are prepared once. `synchronous = FULL` makes a committed write survive kill -9 and
 * power loss (invariant 1); WAL keeps readers off the writer's back.
 */
import Database from 'better-sqlite3';
import type {
  Account,
  Comment,
  OrderEvent,
  OrderFields,
  OrderPage,
  OrderRecord,
  Post,
  Store,
  User,
  WriteDecision,
  WriteResult,
} from '../store';
import { MIGRATIONS } from './migrations';
import { DEMO_ACCOUNTS, DEMO_COMMENTS, DEMO_FRIENDS, DEMO_ORDERS, DEMO_POSTS, DEMO_USERS } from '../demo';

interface OrderRow {
  id: number;
  account_id: number;
  revision: number;
  status: string;
  items: string;
  currency: string;
  discount_code: string | null;
  discount_percent: number | null;
  note: string | null;
  created_at: string;
  updated_at: string;
}
interface EventRow {
  order_id: number;
  seq: number;
  account_id: number;
  type: OrderEvent['type'];
  payload: string;
  created_at: string;
}
interface AccountRow {
  id: number;
  name: string;
  pinned_version: number | null;
}
interface UserRow {
  id: string;
  name: string;
  account_id: number | null;
}

const toOrder = (r: OrderRow): OrderRecord => ({
  id: r.id,
  accountId: r.account_id,
  revision: r.revision,
  status: r.status,
  items: JSON.parse(r.items),
  currency: r.currency,
  discount: r.discount_code === null ? null : { code: r.discount_code, percent: r.discount_percent ?? 0 },
  note: r.note,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
const toEvent = (r: EventRow): OrderEvent => ({
  orderId: r.order_id,
  accountId: r.account_id,
  seq: r.seq,
  type: r.type,
  order: JSON.parse(r.payload),
  createdAt: r.created_at,
});
const toAccount = (r: AccountRow): Account => ({ id: r.id, name: r.name, pinnedVersion: r.pinned_version });
const toUser = (r: UserRow): User => ({ id: r.id, name: r.name, accountId: r.account_id });

/** Groups rows by a key into arrays aligned with `keys` (DataLoader's contract). */
function align<K, R>(keys: readonly K[], rows: R[], keyOf: (r: R) => K): R[][] {
  const by = new Map<K, R[]>();
  for (const r of rows) {
    const k = keyOf(r);
    const list = by.get(k);
    if (list) list.push(r);
    else by.set(k, [r]);
  }
  return keys.map((k) => by.get(k) ?? []);
}

/** Upper bound on ids per batch call: one statement, bounded work. */
const MAX_BATCH = 1000;

export class SqliteStore implements Store {
  private readonly db: Database.Database;
  /** Statements executed, so tests can prove batching (one query per GraphQL level). */
  queryCount = 0;
  private stmts?: ReturnType<SqliteStore['prepare']>;

  /**
   * @param synchronous NORMAL (default): in WAL mode a commit is durable once the OS has
   *   it, so it survives the process being killed (invariant 1) but not a power loss;
   *   FULL also fsyncs the WAL on every commit and survives power loss, at a cost in
   *   write throughput (BENCHMARKS.md measures both).
   */
  constructor(file: string, synchronous: 'normal' | 'full' = 'normal') {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
  }

  private prepare() {
    const db = this.db;
    return {
      accountByName: db.prepare<[string], AccountRow>('SELECT id, name, pinned_version FROM accounts WHERE name = ?'),
      insertAccount: db.prepare<[string, string]>('INSERT INTO accounts (name, created_at) VALUES (?, ?) ON CONFLICT(name) DO NOTHING'),
      insertToken: db.prepare<[string, number, string]>('INSERT INTO tokens (token_hash, account_id, created_at) VALUES (?, ?, ?)'),
      accountByToken: db.prepare<[string], AccountRow>(
        'SELECT a.id, a.name, a.pinned_version FROM tokens t JOIN accounts a ON a.id = t.account_id WHERE t.token_hash = ?',
      ),
      setPinned: db.prepare<[number | null, number]>('UPDATE accounts SET pinned_version = ? WHERE id = ?'),
      // The demo is loaded when no graph data exists: accounts may already exist (`npm run token` first).
      countUsers: db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM (SELECT 1 FROM users LIMIT 1)'),
      insertOrder: db.prepare(
        `INSERT INTO orders (account_id, revision, status, items, currency, discount_code, discount_percent, note, created_at, updated_at)
         VALUES (@account_id, 1, @status, @items, @currency, @discount_code, @discount_percent, @note, @now, @now)`,
      ),
      getOrder: db.prepare<[number, number], OrderRow>('SELECT * FROM orders WHERE id = ? AND account_id = ?'),
      updateOrder: db.prepare(
        `UPDATE orders SET revision = revision + 1, status = @status, items = @items, currency = @currency,
           discount_code = @discount_code, discount_percent = @discount_percent, note = @note, updated_at = @now
         WHERE id = @id AND revision = @revision`,
      ),
      insertEvent: db.prepare<[number, number, number, string, string, string]>(
        'INSERT INTO order_events (order_id, seq, account_id, type, payload, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      listOrders: db.prepare<[number, number, number], OrderRow>('SELECT * FROM orders WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?'),
      eventsAfter: db.prepare<[number, number, number], EventRow>('SELECT * FROM order_events WHERE order_id = ? AND seq > ? ORDER BY seq LIMIT ?'),
      usersByIds: db.prepare<[string], UserRow>('SELECT u.id, u.name, u.account_id FROM json_each(?) j JOIN users u ON u.id = j.value'),
      friendsOf: db.prepare<[{ ids: string; first: number }], UserRow & { parent: string }>(
        `SELECT parent, id, name, account_id FROM (
           SELECT f.user_id AS parent, u.id, u.name, u.account_id,
                  ROW_NUMBER() OVER (PARTITION BY f.user_id ORDER BY u.id) AS rn
           FROM json_each(@ids) j JOIN friends f ON f.user_id = j.value JOIN users u ON u.id = f.friend_id)
         WHERE rn <= @first ORDER BY parent, id`,
      ),
      postsOf: db.prepare<[{ ids: string; first: number }], { id: string; author_id: string; title: string }>(
        `SELECT id, author_id, title FROM (
           SELECT p.*, ROW_NUMBER() OVER (PARTITION BY p.author_id ORDER BY p.id) AS rn
           FROM json_each(@ids) j JOIN posts p ON p.author_id = j.value)
         WHERE rn <= @first ORDER BY author_id, id`,
      ),
      commentsOf: db.prepare<[{ ids: string; first: number }], { id: string; post_id: string; author_id: string; body: string }>(
        `SELECT id, post_id, author_id, body FROM (
           SELECT c.*, ROW_NUMBER() OVER (PARTITION BY c.post_id ORDER BY c.id) AS rn
           FROM json_each(@ids) j JOIN comments c ON c.post_id = j.value)
         WHERE rn <= @first ORDER BY post_id, id`,
      ),
      ordersOfAccounts: db.prepare<[{ ids: string; first: number }], OrderRow>(
        `SELECT id, account_id, revision, status, items, currency, discount_code, discount_percent, note, created_at, updated_at FROM (
           SELECT o.*, ROW_NUMBER() OVER (PARTITION BY o.account_id ORDER BY o.id) AS rn
           FROM json_each(@ids) j JOIN orders o ON o.account_id = j.value)
         WHERE rn <= @first ORDER BY account_id, id`,
      ),
      userOfAccount: db.prepare<[number], UserRow>('SELECT id, name, account_id FROM users WHERE account_id = ?'),
      insertUser: db.prepare<[string, string, number | null]>('INSERT INTO users (id, name, account_id) VALUES (?, ?, ?)'),
      insertFriend: db.prepare<[string, string]>('INSERT OR IGNORE INTO friends (user_id, friend_id) VALUES (?, ?)'),
      insertPost: db.prepare<[string, string, string]>('INSERT INTO posts (id, author_id, title) VALUES (?, ?, ?)'),
      insertComment: db.prepare<[string, string, string, string]>('INSERT INTO comments (id, post_id, author_id, body) VALUES (?, ?, ?, ?)'),
    };
  }

  private get s() {
    if (!this.stmts) throw new Error('SqliteStore: call migrate() first');
    return this.stmts;
  }

  private run<T>(fn: () => T): T {
    this.queryCount++;
    return fn();
  }

  async migrate(): Promise<void> {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    const applied = new Set(this.db.prepare<[], { id: number }>('SELECT id FROM schema_migrations').all().map((r) => r.id));
    for (const m of MIGRATIONS) {
      if (applied.has(m.id)) continue;
      this.db.transaction(() => {
        this.db.exec(m.sql);
        this.db.prepare('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)').run(m.id, m.name, new Date().toISOString());
      })();
    }
    this.stmts ??= this.prepare();
  }

  async seedDemo(): Promise<boolean> {
    if (this.s.countUsers.get()!.n > 0) return false;
    const now = '2026-01-01T00:00:00.000Z';
    this.db.transaction(() => {
      const ids = new Map<string, number>();
      for (const name of DEMO_ACCOUNTS) {
        this.s.insertAccount.run(name, now);
        ids.set(name, this.s.accountByName.get(name)!.id);
      }
      for (const u of DEMO_USERS) this.s.insertUser.run(u.id, u.name, u.account ? ids.get(u.account)! : null);
      for (const [a, b] of DEMO_FRIENDS) this.s.insertFriend.run(a, b);
      for (const p of DEMO_POSTS) this.s.insertPost.run(p.id, p.authorId, p.title);
      for (const c of DEMO_COMMENTS) this.s.insertComment.run(c.id, c.postId, c.authorId, c.body);
      for (const o of DEMO_ORDERS) this.createSync(ids.get(o.account)!, o.fields);
    })();
    return true;
  }

  async ping(): Promise<boolean> {
    return this.db.prepare('SELECT 1 AS ok').get() !== undefined;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  async ensureAccount(name: string): Promise<Account> {
    this.run(() => this.s.insertAccount.run(name, new Date().toISOString()));
    return toAccount(this.run(() => this.s.accountByName.get(name))!);
  }

  async addToken(accountId: number, tokenHash: string): Promise<void> {
    this.run(() => this.s.insertToken.run(tokenHash, accountId, new Date().toISOString()));
  }

  async accountByTokenHash(tokenHash: string): Promise<Account | null> {
    const row = this.run(() => this.s.accountByToken.get(tokenHash));
    return row ? toAccount(row) : null;
  }

  async setPinnedVersion(accountId: number, version: number | null): Promise<void> {
    this.run(() => this.s.setPinned.run(version, accountId));
  }

  private static columns(fields: OrderFields) {
    return {
      status: fields.status,
      items: JSON.stringify(fields.items),
      currency: fields.currency,
      discount_code: fields.discount?.code ?? null,
      discount_percent: fields.discount?.percent ?? null,
      note: fields.note,
    };
  }

  private createSync(accountId: number, fields: OrderFields): { order: OrderRecord; event: OrderEvent } {
    const now = new Date().toISOString();
    const { lastInsertRowid } = this.s.insertOrder.run({ account_id: accountId, now, ...SqliteStore.columns(fields) });
    const order = toOrder(this.s.getOrder.get(Number(lastInsertRowid), accountId)!);
    const event: OrderEvent = { orderId: order.id, accountId, seq: 1, type: 'order.created', order, createdAt: now };
    this.s.insertEvent.run(order.id, 1, accountId, event.type, JSON.stringify(order), now);
    this.queryCount += 3;
    return { order, event };
  }

  async createOrder(accountId: number, fields: OrderFields): Promise<{ order: OrderRecord; event: OrderEvent }> {
    return this.db.transaction(() => this.createSync(accountId, fields)).immediate();
  }

  async getOrder(accountId: number, orderId: number): Promise<OrderRecord | null> {
    const row = this.run(() => this.s.getOrder.get(orderId, accountId));
    return row ? toOrder(row) : null;
  }

  async writeOrder<R>(accountId: number, orderId: number, decide: (current: OrderRecord) => WriteDecision<R>): Promise<WriteResult<R>> {
    // IMMEDIATE takes the write lock before the read, so the decision sees the row it replaces.
    return this.db
      .transaction((): WriteResult<R> => {
        const row = this.run(() => this.s.getOrder.get(orderId, accountId));
        if (!row) return { ok: false, reason: 'not_found' };
        const current = toOrder(row);
        const decision = decide(current);
        if (!decision.apply) return { ok: false, reason: decision.reason };
        const now = new Date().toISOString();
        const changed = this.run(() =>
          this.s.updateOrder.run({ id: orderId, revision: current.revision, now, ...SqliteStore.columns(decision.fields) }),
        ).changes;
        if (changed !== 1) throw new Error(`order ${orderId}: revision moved inside a write transaction`);
        const order: OrderRecord = { ...current, ...decision.fields, revision: current.revision + 1, updatedAt: now };
        const event: OrderEvent = { orderId, accountId, seq: order.revision, type: decision.eventType, order, createdAt: now };
        this.run(() => this.s.insertEvent.run(orderId, event.seq, accountId, event.type, JSON.stringify(order), now));
        return { ok: true, order, event };
      })
      .immediate();
  }

  async listOrders(accountId: number, after: number, limit: number): Promise<OrderPage> {
    const rows = this.run(() => this.s.listOrders.all(accountId, after, limit + 1));
    return { orders: rows.slice(0, limit).map(toOrder), hasMore: rows.length > limit };
  }

  async eventsAfter(orderId: number, afterSeq: number, limit: number): Promise<OrderEvent[]> {
    return this.run(() => this.s.eventsAfter.all(orderId, afterSeq, limit)).map(toEvent);
  }

  async usersByIds(ids: readonly string[]): Promise<(User | null)[]> {
    const rows = this.run(() => this.s.usersByIds.all(JSON.stringify(ids.slice(0, MAX_BATCH))));
    const by = new Map(rows.map((r) => [r.id, toUser(r)]));
    return ids.map((id) => by.get(id) ?? null);
  }

  async friendsOf(userIds: readonly string[], first: number): Promise<User[][]> {
    const rows = this.run(() => this.s.friendsOf.all({ ids: JSON.stringify(userIds.slice(0, MAX_BATCH)), first }));
    return align(userIds, rows, (r) => r.parent).map((list) => list.map(toUser));
  }

  async postsOf(userIds: readonly string[], first: number): Promise<Post[][]> {
    const rows = this.run(() => this.s.postsOf.all({ ids: JSON.stringify(userIds.slice(0, MAX_BATCH)), first }));
    return align(userIds, rows, (r) => r.author_id).map((list) => list.map((r) => ({ id: r.id, authorId: r.author_id, title: r.title })));
  }

  async commentsOf(postIds: readonly string[], first: number): Promise<Comment[][]> {
    const rows = this.run(() => this.s.commentsOf.all({ ids: JSON.stringify(postIds.slice(0, MAX_BATCH)), first }));
    return align(postIds, rows, (r) => r.post_id).map((list) =>
      list.map((r) => ({ id: r.id, postId: r.post_id, authorId: r.author_id, body: r.body })),
    );
  }

  async ordersOfAccounts(accountIds: readonly number[], first: number): Promise<OrderRecord[][]> {
    const rows = this.run(() => this.s.ordersOfAccounts.all({ ids: JSON.stringify(accountIds.slice(0, MAX_BATCH)), first }));
    return align(accountIds, rows, (r) => r.account_id).map((list) => list.map(toOrder));
  }

  async userOfAccount(accountId: number): Promise<User | null> {
    const row = this.run(() => this.s.userOfAccount.get(accountId));
    return row ? toUser(row) : null;
  }

  /** True when the database runs in WAL mode (the test checks the pragma took). */
  journalMode(): string {
    return String(this.db.pragma('journal_mode', { simple: true }));
  }
}
