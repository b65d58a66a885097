/**
 * Every store port on an embedded SQLite file (better-sqlite3, WAL).
 *
 * better-sqlite3 is synchronous: every statement blocks the event loop while it runs,
 * so every query here is bounded by an index and a LIMIT, and the statements of the
 * request path are prepared once, in `migrate()`, never per call (a few rare ones, such as
 * reading the deployment id at start, are prepared where they run). WAL keeps readers off the
 * writer's back. Every write goes through the group commit (`batched`), which waits for
 * another process's write lock (a second worker, `npm run token`, a backup) without
 * blocking the event loop: SQLite's own `busy_timeout` sleeps inside the statement, so it
 * is kept short (LOCK_SPIN_MS) and the commit is tried again on a timer until the write's
 * `busyTimeoutMs` has passed. Reads share a read transaction per turn (`turnRead`).
 *
 * Split by concern: the statements are in statements.ts (the catalogue), row types and
 * mappers in parsers.ts, the graph reads' alignment and mapping in ../rows.ts.
 */
import Database from 'better-sqlite3';
import type {
  Account,
  Accounts,
  AppliedWrite,
  FieldReadCounts,
  FieldReads,
  FieldReadTotal,
  OrderEvent,
  IdempotencyKeys,
  Orders,
  SocialGraph,
  StoreLifecycle,
  TokenInfo,
  OrderFields,
  OrderPage,
  RevisionPage,
  OrderRecord,
  WriteDecision,
  WriteResult,
} from '../store';
import { MIGRATIONS } from './migrations';
import { SqliteIdempotency } from './idempotency';
import { unavailableOr } from './unavailable';
import type { IdempotencyClaim, IdempotencyClaimRequest, IdempotentCompletion, StoredResponse } from '../idempotency';
import { GraphReads, MAX_BATCH, clampRows, toAccount, type GraphStatements } from '../rows';
import { columnsOf, toEvent, toOrder, type BatchParams, type OrderRow } from './parsers';
import { prepareStatements, type Statements } from './statements';
import { mergeFieldReads } from '../fieldReads';
import { DEMO_ACCOUNTS, DEMO_COMMENTS, DEMO_FRIENDS, DEMO_ORDERS, DEMO_POSTS, DEMO_USERS } from '../demo';

export { MAX_BATCH, MAX_ROWS } from '../rows';

/** The JSON-array parameter of a batch statement, with `first` per parent and an overall row cap. */
function batch(ids: readonly (string | number)[], first: number): BatchParams {
  if (ids.length > MAX_BATCH) throw new RangeError(`SqliteStore: batch of ${ids.length} ids exceeds ${MAX_BATCH}`);
  const per = clampRows(first);
  return { ids: JSON.stringify(ids), first: per, cap: new Set(ids).size * per };
}

/** Reads sharing one read transaction at most (see `SqliteStore.turnRead`): bounds how long a snapshot is held. */
const READS_PER_TRANSACTION = 256;
/** Order writes committed together at most (see `SqliteStore.batched`): bounds one turn's work. */
const WRITES_PER_COMMIT = 64;
/**
 * How long one statement may wait, inside SQLite and so blocking the event loop, for
 * another connection's lock (`busy_timeout`): long enough for another worker's group
 * commit, fsync included, short enough that a lock held for seconds (a backup) costs the
 * process a few ms per try while `batched` waits for it on a timer.
 */
const LOCK_SPIN_MS = 20;
/** The first wait, in ms, before a group commit that found the file locked tries again; it doubles each time, up to LOCK_RETRY_MAX_MS. */
const LOCK_RETRY_MS = 10;
const LOCK_RETRY_MAX_MS = 200;
const isBusy = (error: unknown): boolean => typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' && error.code.startsWith('SQLITE_BUSY');

/** A write waiting for a group commit: `run` does its statements and returns how to answer it once committed. */
interface PendingWrite {
  /** Until when (ms since the epoch) it waits for another connection's write lock; then it fails as unavailable. */
  until: number;
  run: () => () => void;
  fail: (error: unknown) => void;
}

export class SqliteStore extends GraphReads<OrderRow> implements StoreLifecycle, Accounts, Orders, IdempotencyKeys, SocialGraph, FieldReadCounts {
  private readonly db: Database.Database;
  /** Statements executed (every `run`/`get`/`all`), so tests can prove batching: one query per GraphQL level. */
  queryCount = 0;
  private stmts?: Statements;
  private readonly pingStmt: Database.Statement<[], { ok: number }>;
  private idem?: SqliteIdempotency;
  /** Group commits of order writes so far (see `batched`), so tests can count transactions. */
  groupCommits = 0;
  /** Reads waiting for this turn's read transaction (see `turnRead`): each runs its statement and settles its promise. */
  private pendingReads: (() => void)[] = [];
  /** Read transactions shared by more than one read so far (see `turnRead`), so tests can count them. */
  sharedReads = 0;
  /** Order writes waiting for the next group commit (see `batched`). */
  private pendingWrites: PendingWrite[] = [];
  /** Set while the group commit waits for another connection's write lock (`waitForLock`). */
  private lockRetry: NodeJS.Timeout | undefined;
  /** Tries since the last commit that went through: the next wait doubles with each. */
  private lockTries = 0;
  /** `close` has begun: a locked file fails what is left instead of waiting. */
  private closing = false;
  /**
   * Runs `fn` in one transaction, the wrapper built once: better-sqlite3's `transaction()`
   * builds five functions at every call, about 5 % of a create's CPU under load (a
   * `--cpu-prof` of the service under wrk). `.immediate` takes the write lock first.
   */
  private readonly inTransaction: ReturnType<typeof this.transactionOf>;

  /**
   * @param file a path, or `':memory:'` (tests; no WAL there).
   * @param synchronous FULL (default) fsyncs the WAL on every commit: an acknowledged
   *   write survives kill -9, an OS crash and a power loss. NORMAL, which
   *   the service may choose via `SQLITE_SYNCHRONOUS`, still survives the process being
   *   killed (the commit is in the OS's cache) but may lose the last commits on power
   *   loss, for more write throughput (BENCHMARKS.md measures both).
   * @param busyTimeoutMs how long a write waits for another connection's write lock
   *   (another worker, `npm run token`, a backup) before failing with `StoreUnavailableError`.
   */
  constructor(
    file: string,
    synchronous: 'normal' | 'full' = 'full',
    private readonly busyTimeoutMs = 5000,
  ) {
    super();
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    this.db.pragma('foreign_keys = ON');
    this.db.pragma(`busy_timeout = ${Math.min(LOCK_SPIN_MS, Math.max(0, Math.trunc(busyTimeoutMs)))}`);
    this.pingStmt = this.db.prepare<[], { ok: number }>('SELECT 1 AS ok');
    this.inTransaction = this.transactionOf();
  }

  private transactionOf() {
    return this.db.transaction((fn: () => void) => fn());
  }

  /** Every statement the store runs after `migrate()`, prepared once (statements.ts). */
  private prepare(): Statements {
    return prepareStatements(this.db);
  }

  /** The prepared statements; there are none before `migrate()`. */
  private get statements(): Statements {
    if (!this.stmts) throw new Error('SqliteStore: call migrate() first');
    return this.stmts;
  }

  /** Runs one statement execution, counted (see `guarded`). */
  private run<T>(fn: () => T): T {
    this.queryCount++;
    return this.guarded(fn);
  }

  /** Runs `fn`; a locked file or a closed connection fails it with `StoreUnavailableError` (./unavailable.ts). */
  private guarded<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      throw unavailableOr(error);
    }
  }

  async migrate(): Promise<void> {
    // At start-up nothing else runs: two processes starting together on one file wait for each other the whole timeout.
    this.atStartup(() => this.migrateNow());
    this.stmts ??= this.prepare();
    this.idem ??= new SqliteIdempotency(this.db, () => this.queryCount++);
  }

  /** Runs `fn` with SQLite waiting the whole `busyTimeoutMs` for a lock (start-up, before any request). */
  private atStartup<T>(fn: () => T): T {
    const spin = Number(this.db.pragma('busy_timeout', { simple: true }));
    this.db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(this.busyTimeoutMs))}`);
    try {
      return fn();
    } finally {
      this.db.pragma(`busy_timeout = ${spin}`);
    }
  }

  private migrateNow(): void {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    const isApplied = this.db.prepare<[number], { one: number }>('SELECT 1 AS one FROM schema_migrations WHERE id = ?');
    const record = this.db.prepare<[number, string, string]>('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)');
    for (const m of MIGRATIONS) {
      // Checked inside an IMMEDIATE transaction: two processes starting together
      // (service + `npm run token`) apply each migration once, the second one waits.
      this.db
        .transaction(() => {
          if (this.run(() => isApplied.get(m.id))) return;
          this.db.exec(m.sql);
          this.run(() => record.run(m.id, m.name, new Date().toISOString()));
        })
        .immediate();
    }
  }

  private get idempotency(): SqliteIdempotency {
    if (!this.idem) throw new Error('SqliteStore: call migrate() first');
    return this.idem;
  }

  async seedDemo(): Promise<boolean> {
    // IMMEDIATE: the emptiness check and the load are one step, so two processes
    // starting on the same empty file cannot both load it.
    return this.atStartup(() =>
      this.db
        .transaction((): boolean => {
          if (this.run(() => this.statements.anyUser.get())) return false;
          const now = '2026-01-01T00:00:00.000Z';
          const ids = new Map<string, number>();
          for (const name of DEMO_ACCOUNTS) ids.set(name, this.ensureAccountSync(name, now).id);
          for (const u of DEMO_USERS) this.run(() => this.statements.insertUser.run(u.id, u.name, u.account ? ids.get(u.account)! : null));
          for (const [a, b] of DEMO_FRIENDS) this.run(() => this.statements.insertFriend.run(a, b));
          for (const p of DEMO_POSTS) this.run(() => this.statements.insertPost.run(p.id, p.authorId, p.title));
          for (const c of DEMO_COMMENTS) this.run(() => this.statements.insertComment.run(c.id, c.postId, c.authorId, c.body));
          for (const o of DEMO_ORDERS) this.createSync(ids.get(o.account)!, o.fields);
          return true;
        })
        .immediate(),
    );
  }

  async deploymentId(): Promise<string> {
    const row = this.run(() => this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'deployment'").get());
    if (!row) throw new Error('SqliteStore: no deployment id (migrate first)');
    return row.value;
  }

  async ping(): Promise<boolean> {
    try {
      return this.run(() => this.pingStmt.get())?.ok === 1;
    } catch {
      return false; // closed or unreadable: not ready
    }
  }

  async close(): Promise<void> {
    // Reads and writes already accepted are answered first (or failed, when the file stays locked).
    this.closing = true;
    clearTimeout(this.lockRetry);
    this.lockRetry = undefined;
    this.flushReads();
    while (this.pendingWrites.length > 0 && this.db.open) this.commitPending();
    if (this.db.open) this.db.close();
  }

  private ensureAccountSync(name: string, now: string): Account {
    this.run(() => this.statements.insertAccount.run(name, now));
    return toAccount(this.run(() => this.statements.accountByName.get(name))!);
  }

  ensureAccount(name: string): Promise<Account> {
    return this.batched(() => this.ensureAccountSync(name, new Date().toISOString()));
  }

  async findAccount(name: string): Promise<Account | null> {
    const row = this.run(() => this.statements.accountByName.get(name));
    return row ? toAccount(row) : null;
  }

  async addToken(accountId: number, selector: string, verifierHash: string): Promise<void> {
    await this.batched(() => this.run(() => this.statements.insertToken.run(selector, verifierHash, accountId, new Date().toISOString())));
  }

  async tokenBySelector(selector: string): Promise<{ account: Account; verifierHash: string } | null> {
    // The hash comparison is the caller's (constant time); here only the indexed lookup.
    const row = await this.turnRead(() => this.statements.tokenBySelector.get(selector));
    return row ? { account: toAccount(row), verifierHash: row.verifier_hash } : null;
  }

  async listTokens(accountId: number): Promise<TokenInfo[]> {
    return (await this.turnRead(() => this.statements.tokensOf.all(accountId))).map((r) => ({ selector: r.selector, createdAt: r.created_at }));
  }

  revokeToken(accountId: number, selector: string): Promise<boolean> {
    return this.batched(() => this.run(() => this.statements.deleteToken.run(accountId, selector)).changes > 0);
  }

  async setPinnedVersion(accountId: number, version: number | null): Promise<void> {
    await this.batched(() => this.run(() => this.statements.setPinned.run(version, accountId)));
  }

  /** Inserts order + `order.created` event; the caller provides the transaction. */
  private createSync(accountId: number, fields: OrderFields): AppliedWrite {
    const now = new Date().toISOString();
    const cols = columnsOf(fields);
    const { lastInsertRowid } = this.run(() => this.statements.insertOrder.run({ account_id: accountId, now, ...cols }));
    // Built from the bound columns through the same mapping a read uses, so it equals what getOrder returns.
    const order = toOrder({ id: Number(lastInsertRowid), account_id: accountId, revision: 1, ...cols, created_at: now, updated_at: now });
    const event: OrderEvent = { orderId: order.id, accountId, seq: 1, type: 'order.created', order, createdAt: now };
    this.run(() => this.statements.insertEvent.run(order.id, 1, accountId, event.type, JSON.stringify(order), now));
    return { order, event };
  }

  createOrder(accountId: number, fields: OrderFields, complete?: IdempotentCompletion<AppliedWrite>): Promise<AppliedWrite> {
    return this.batched(() => {
      const created = this.createSync(accountId, fields);
      if (complete) this.idempotency.completeIn(accountId, complete, created);
      return created;
    });
  }

  /**
   * A read of the store's, answered at the end of this turn of the event loop together
   * with the other reads of the turn, in one read transaction (`BEGIN` ... `COMMIT`).
   * Why: on a WAL file each statement outside a transaction opens and closes a read
   * transaction of its own (the shared-memory index read, two `fcntl` locks), about 3.5
   * us of the 4 us a one-row indexed read costs; inside a shared one the same read costs
   * about 0.3 us when 50 share it (`bench/sqlite-reads.ts`; BENCHMARKS.md, "What changed
   * on 2026-11-27: the reads of one turn share one read transaction"). Under load a turn
   * holds many requests' reads (nearly always all 50 under wrk -c50), so the lock work is
   * paid once per turn instead of once per read.
   *
   * Freshness is unchanged: the transaction's snapshot is taken after the last of these
   * reads was asked for, so after every request that asked for one had been received.
   * Any write acknowledged before such a request was sent, by this process or another on
   * the same file, is in the snapshot. A lone read runs on its own (a transaction would
   * cost more than it saves). The statements run in one synchronous loop; the promises
   * settle after the transaction has ended, so no caller's code runs inside it. A long
   * turn's reads take a fresh transaction every READS_PER_TRANSACTION, so no snapshot is
   * held for long (it would keep the WAL from being reset by a checkpoint).
   *
   * The reads wait for `setImmediate`, as the group commit's writes do: a test that fakes
   * timers must leave `setImmediate` real (`doNotFake: ['setImmediate']`).
   */
  private turnRead<T>(read: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const fail: (error: unknown) => void = reject; // the error as `run` reports it (a locked file or closed connection: StoreUnavailableError)
      const pending = this.pendingReads.push(() => {
        try {
          resolve(this.run(read));
        } catch (error) {
          fail(error);
        }
      });
      if (pending === 1) setImmediate(this.flushReads);
    });
  }

  /** Runs the turn's reads (see `turnRead`): in one read transaction when there are several. */
  private readonly flushReads = (): void => {
    const reads = this.pendingReads;
    if (reads.length === 0) return;
    this.pendingReads = [];
    let shared = reads.length > 1 && this.beginRead();
    try {
      for (let i = 0; i < reads.length; i++) {
        if (shared && i > 0 && i % READS_PER_TRANSACTION === 0) shared = this.endRead() && this.beginRead();
        reads[i]();
      }
    } finally {
      if (shared) this.endRead();
    }
  };

  /**
   * Opens the turn's read transaction; false when it cannot (closed, not migrated): the
   * reads then run on their own. No transaction is open between turns (`endRead` makes
   * sure of it); if one were, the reads would run in it unshared.
   */
  private beginRead(): boolean {
    if (!this.stmts || !this.db.open || this.db.inTransaction) return false;
    try {
      this.stmts.beginRead.run();
    } catch {
      return false;
    }
    this.sharedReads++;
    return true;
  }

  /**
   * Ends the read transaction, true when it did. It wrote nothing, so a failing COMMIT
   * loses nothing and is rolled back. A transaction that can be neither committed nor
   * rolled back closes the connection: later writes would otherwise nest in it (as
   * savepoints, never committed) and reads would keep its old snapshot. The store then
   * fails every call and `ping` (readiness) says false, which operators see.
   */
  private endRead(): boolean {
    if (!this.db.inTransaction) return true;
    try {
      this.statements.commitRead.run();
    } catch {
      try {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
      } catch {
        // handled below
      }
    }
    if (!this.db.inTransaction) return true;
    this.db.close();
    return false;
  }

  /**
   * Group commit for the order writes: those that arrive within one turn of the event loop
   * run, in arrival order, in one IMMEDIATE transaction (at most WRITES_PER_COMMIT), each
   * under its own savepoint, so one that throws is rolled back alone and rejects. Every one
   * resolves only after that transaction has committed: an acknowledged write is as durable
   * as before, and the commit (the WAL append with its locks and its periodic checkpoint,
   * about a third of a write's CPU in a profile under load) is paid once per batch rather
   * than once per write. A failed BEGIN or COMMIT, or an error that ends the transaction
   * itself (SQLITE_FULL, SQLITE_IOERR), rejects the whole batch with that error: none of it
   * was written. A write waits at most for the rest of the loop's turn (`setImmediate`),
   * or, while another connection holds the file's write lock, until that lock is free
   * (`waitForLock`) or its `busyTimeoutMs` has passed.
   */
  private batched<T>(op: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pendingWrites.push({
        until: Date.now() + this.busyTimeoutMs,
        run: () => {
          const value = op();
          return () => resolve(value);
        },
        fail: reject,
      });
      if (this.pendingWrites.length === 1) setImmediate(() => this.commitPending());
    });
  }

  private commitPending(): void {
    if (this.lockRetry !== undefined) return; // waiting for another connection's lock: the timer commits
    const batch = this.pendingWrites.splice(0, WRITES_PER_COMMIT);
    if (batch.length === 0) return; // `close` committed them already
    if (this.pendingWrites.length > 0) setImmediate(() => this.commitPending());
    const answers: (() => void)[] = [];
    try {
      // Inside an open transaction better-sqlite3 would make this one a savepoint, committed
      // only with the outer one: refused, so a write is never acknowledged uncommitted.
      if (this.db.inTransaction) throw new Error('SqliteStore: a transaction is already open');
      this.inTransaction.immediate(() => {
        if (batch.length === 1) return void answers.push(batch[0].run()); // throws: the transaction rolls back
        for (const w of batch) {
          this.statements.savepoint.run();
          try {
            answers.push(w.run());
          } catch (error) {
            // An error that ended the whole transaction (SQLITE_FULL, SQLITE_IOERR) fails the batch with it.
            if (!this.db.inTransaction) throw error;
            this.statements.rollbackToSavepoint.run();
            answers.push(() => w.fail(error));
          }
          this.statements.releaseSavepoint.run();
        }
      });
    } catch (error) {
      // Another connection holds the write lock: the transaction wrote nothing; try again later.
      if (isBusy(error) && !this.closing) return this.waitForLock(batch, error);
      const failure = unavailableOr(error);
      for (const w of batch) w.fail(failure);
      return;
    }
    this.lockTries = 0;
    this.groupCommits++;
    for (const answer of answers) answer();
  }

  /**
   * A batch that found the file locked (SQLITE_BUSY after LOCK_SPIN_MS): the writes still
   * within their `busyTimeoutMs` go back to the head of the queue, in their order, and the
   * group commit tries again after a wait that doubles each time (the event loop runs
   * meanwhile); the others fail as unavailable (503, retry later), nothing of them written.
   */
  private waitForLock(batch: PendingWrite[], error: unknown): void {
    const now = Date.now();
    const failure = unavailableOr(error);
    const waiting: PendingWrite[] = [];
    for (const w of batch) {
      if (w.until > now) waiting.push(w);
      else w.fail(failure);
    }
    this.pendingWrites.unshift(...waiting);
    if (this.pendingWrites.length === 0) return;
    const wait = Math.min(LOCK_RETRY_MAX_MS, LOCK_RETRY_MS * 2 ** this.lockTries++);
    this.lockRetry = setTimeout(() => {
      this.lockRetry = undefined;
      this.commitPending();
    }, wait);
  }

  async getOrder(accountId: number, orderId: number): Promise<OrderRecord | null> {
    const row = await this.turnRead(() => this.statements.getOrder.get(orderId, accountId));
    return row ? toOrder(row) : null;
  }

  async latestSeqs(orderIds: readonly number[]): Promise<Map<number, number>> {
    if (orderIds.length > MAX_BATCH) throw new RangeError(`latestSeqs: at most ${MAX_BATCH} ids, got ${orderIds.length}`);
    if (orderIds.length === 0) return new Map();
    const rows = await this.turnRead(() => this.statements.latestSeqs.all(JSON.stringify(orderIds)));
    return new Map(rows.map((r) => [r.id, r.revision]));
  }

  async orderRevision(accountId: number, orderId: number): Promise<number | null> {
    return (await this.turnRead(() => this.statements.orderRevision.get(orderId, accountId))) ?? null;
  }

  writeOrder<R>(accountId: number, orderId: number, decide: (current: OrderRecord) => WriteDecision<R>, complete?: IdempotentCompletion<AppliedWrite>): Promise<WriteResult<R>> {
    // In an IMMEDIATE transaction (see `batched`), which takes the write lock before the
    // read, so the decision sees the row it replaces, also against another process on the
    // same file. A throwing `decide` rolls back (nothing was written) and rejects.
    return this.batched(() => this.writeIn(accountId, orderId, decide, complete));
  }

  /** The write's read, decision and statements; the caller holds the IMMEDIATE transaction. */
  private writeIn<R>(accountId: number, orderId: number, decide: (current: OrderRecord) => WriteDecision<R>, complete?: IdempotentCompletion<AppliedWrite>): WriteResult<R> {
    const row = this.run(() => this.statements.getOrder.get(orderId, accountId));
    if (!row) return { ok: false, reason: 'not_found' };
    const decision = decide(toOrder(row));
    if (!decision.apply) return { ok: false, reason: decision.reason };
    const now = new Date().toISOString();
    const cols = columnsOf(decision.fields);
    const { changes } = this.run(() => this.statements.updateOrder.run({ id: orderId, revision: row.revision, now, ...cols }));
    // Cannot happen under the write lock; if it did, throwing rolls the transaction back.
    if (changes !== 1) throw new Error(`order ${orderId}: revision moved inside a write transaction`);
    const order = toOrder({ ...row, ...cols, revision: row.revision + 1, updated_at: now });
    const event: OrderEvent = { orderId, accountId, seq: order.revision, type: decision.eventType, order, createdAt: now };
    this.run(() => this.statements.insertEvent.run(orderId, event.seq, accountId, event.type, JSON.stringify(order), now));
    if (complete) this.idempotency.completeIn(accountId, complete, { order, event });
    return { ok: true, order, event };
  }

  claimIdempotencyKey(accountId: number, req: IdempotencyClaimRequest): Promise<IdempotencyClaim> {
    return this.batched(() => this.guarded(() => this.idempotency.claim(accountId, req)));
  }

  completeIdempotencyKey(accountId: number, key: string, token: string, response: StoredResponse): Promise<boolean> {
    return this.batched(() => this.guarded(() => this.idempotency.completeAfter(accountId, key, token, response)));
  }

  async releaseIdempotencyKey(accountId: number, key: string, token: string): Promise<void> {
    await this.batched(() => this.guarded(() => this.idempotency.releaseKey(accountId, key, token)));
  }

  sweepIdempotencyKeys(now: number, limit: number): Promise<number> {
    return this.batched(() => this.guarded(() => this.idempotency.sweepExpired(now, limit)));
  }

  async addFieldReads(batch: readonly FieldReads[]): Promise<void> {
    const entries = mergeFieldReads(batch);
    if (entries.length === 0) return;
    await this.batched(() => {
      for (const e of entries) this.run(() => this.statements.addFieldReads.run(e.accountId, e.field, e.day, e.reads));
    });
  }

  async fieldReadTotals(sinceDay: string, limit: number): Promise<FieldReadTotal[]> {
    return this.turnRead(() => this.statements.fieldReadTotals.all(sinceDay, clampRows(limit)));
  }

  async listOrders(accountId: number, after: number, limit: number): Promise<OrderPage> {
    const n = clampRows(limit);
    const rows = await this.turnRead(() => this.statements.listOrders.all(accountId, after, n + 1));
    return { orders: rows.slice(0, n).map(toOrder), hasMore: rows.length > n };
  }

  async listRevisions(accountId: number, after: number, limit: number): Promise<RevisionPage> {
    const n = clampRows(limit);
    const rows = await this.turnRead(() => this.statements.listRevisions.all(accountId, after, n + 1));
    return { orders: rows.slice(0, n).map(([id, revision]) => ({ id, revision })), hasMore: rows.length > n };
  }

  async eventsAfter(orderId: number, afterSeq: number, limit: number): Promise<OrderEvent[]> {
    return (await this.turnRead(() => this.statements.eventsAfter.all(orderId, afterSeq, clampRows(limit)))).map(toEvent);
  }

  /** The graph reads' statements (../rows.ts maps and aligns): for one parent a plain indexed statement, for several the batch one. */
  protected readonly graphStatements: GraphStatements<OrderRow> = {
    usersByIds: (ids) => {
      if (ids.length === 1) return this.turnRead(() => this.statements.userById.all(ids[0]));
      return this.turnRead(() => {
        const p = batch(ids, 1);
        return this.statements.usersByIds.all(p.ids, p.cap);
      });
    },
    friendsOf: (ids, first) => this.turnRead(() => (ids.length === 1 ? this.statements.friendsOfOne.all(ids[0], clampRows(first)) : this.statements.friendsOf.all(batch(ids, first)))),
    postsOf: (ids, first) => this.turnRead(() => (ids.length === 1 ? this.statements.postsOfOne.all(ids[0], clampRows(first)) : this.statements.postsOf.all(batch(ids, first)))),
    commentsOf: (ids, first) => this.turnRead(() => (ids.length === 1 ? this.statements.commentsOfOne.all(ids[0], clampRows(first)) : this.statements.commentsOf.all(batch(ids, first)))),
    ordersOfAccounts: (ids, first, after) =>
      this.turnRead(() => (ids.length === 1 ? this.statements.ordersOfOne.all(ids[0], after, clampRows(first)) : this.statements.ordersOfAccounts.all({ ...batch(ids, first), after }))),
    userOfAccount: (accountId) => this.turnRead(() => this.statements.userOfAccount.get(accountId)),
  };

  protected orderRecord(row: OrderRow): OrderRecord {
    return toOrder(row);
  }

  /** The journal mode in effect (`'wal'` on a file): the test checks the pragma took. */
  journalMode(): string {
    return String(this.db.pragma('journal_mode', { simple: true }));
  }

  /** The connection settings in effect, so tests can check the constructor's pragmas took. */
  settings(): { journalMode: string; synchronous: 'off' | 'normal' | 'full' | 'extra'; foreignKeys: boolean; busyTimeoutMs: number } {
    const sync = Number(this.db.pragma('synchronous', { simple: true }));
    return {
      journalMode: this.journalMode(),
      synchronous: (['off', 'normal', 'full', 'extra'] as const)[sync],
      foreignKeys: Number(this.db.pragma('foreign_keys', { simple: true })) === 1,
      busyTimeoutMs: Number(this.db.pragma('busy_timeout', { simple: true })),
    };
  }

  /** The query plan of a prepared statement, for tests that prove reads use an index. */
  explain(statement: keyof Statements, params: unknown[]): string[] {
    const sql = this.statements[statement].source;
    return this.db
      .prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .all(...params)
      .map((r) => String((r as { detail: unknown }).detail));
  }
}
