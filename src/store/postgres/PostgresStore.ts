/**
 * Every store port on PostgreSQL (`pg.Pool`), for the scaled-out deployment: many
 * processes on many machines share one database.
 *
 * Same semantics as `SqliteStore`, proved by the same suites (`../ports/*.contract.ts`);
 * where SQLite serializes with one file lock, this adapter uses PostgreSQL's own tools:
 * - a write is a compare-and-set on the revision `decide` saw, in one statement with its
 *   event row (no change without its event): of N concurrent writes on any number of
 *   processes exactly one applies on each revision (no lost update), and the others
 *   decide again on the new one (after a few lost races, under the row lock of
 *   `SELECT ... FOR UPDATE`, which an idempotent write always takes); one process's
 *   writes of one order take turns, each deciding on the row the previous one wrote;
 * - `migrate` and `seedDemo` run under a transaction-scoped advisory lock, so processes
 *   starting together apply each migration once and load the demo once;
 * - every batch read is one statement: the distinct parent ids as one array, and per
 *   parent a LATERAL subquery walking the (parent, id) index with `LIMIT first`, so the
 *   work per parent is bounded by `first`, not by how many children it has;
 * - timestamps come from the database clock (one clock for every instance), truncated
 *   to milliseconds so the stored value is exactly the ISO string returned.
 *
 * Split by concern: the statements are in sql.ts (the catalogue), value parsing and row
 * mapping in parsers.ts, the graph reads' alignment and mapping in ../rows.ts; this file
 * holds the ports' methods, each a few lines around one statement.
 */
import { Pool, type PoolClient, type PoolConfig } from 'pg';
import type {
  Account,
  Accounts,
  AppliedWrite,
  FieldReadCounts,
  FieldReads,
  FieldReadTotal,
  IdempotencyKeys,
  OrderEvent,
  OrderFields,
  OrderPage,
  RevisionPage,
  OrderRecord,
  Orders,
  SocialGraph,
  StoreLifecycle,
  TokenInfo,
  WriteDecision,
  WriteResult,
} from '../store';
import { MIGRATIONS } from './migrations';
import { claimOn, completeAfterOn, completeOn, releaseOn, sweepOn, type Run } from './idempotency';
import type { IdempotencyClaim, IdempotencyClaimRequest, IdempotentCompletion, StoredResponse } from '../idempotency';
import { GraphReads, MAX_BATCH, clampRows, toAccount, type AccountRow, type CommentRow, type GraphStatements, type PostRow, type UserRow } from '../rows';
import { NOW, SQL, type Statement } from './sql';
import { TYPES, columnsOf, storable, toEvent, toOrder, type EventRow, type OrderRow } from './parsers';
import { mergeFieldReads } from '../fieldReads';
import { DEMO_ACCOUNTS, DEMO_COMMENTS, DEMO_FRIENDS, DEMO_ORDERS, DEMO_POSTS, DEMO_USERS } from '../demo';
import { isUnavailable, unavailableOr } from './unavailable';
import { StoreUnavailableError } from '../errors';

export { MAX_BATCH, MAX_ROWS } from '../rows';
export type { Statement } from './sql';

/** Compare-and-set attempts of a write before it takes the row lock (see `optimisticWrite`). */
const OPTIMISTIC_ATTEMPTS = 3;

/** Revision reads sent as one statement at most (see `PostgresStore.orderRevision`). */
const REVISIONS_PER_STATEMENT = 256;
/** A revision read waiting for this turn's statement. */
interface PendingRevision {
  key: string;
  accountId: number;
  orderId: number;
  resolve: (revision: number | null) => void;
  reject: (error: unknown) => void;
}

/** One order's writes in this process: who waits, the order as the last one left it, and why the store failed it. */
interface WriteTurn {
  waiting: (() => void)[];
  last?: OrderRecord;
  unavailable?: StoreUnavailableError;
}

export interface PostgresStoreOptions {
  /**
   * A schema of its own (created by `migrate` if missing, and put first on the
   * `search_path` of every connection). Tests give each store a fresh one; a
   * deployment may use it to share a database. Lowercase identifier only. Without it,
   * the URL's own `search_path` (usually `public`) is used.
   */
  schema?: string;
  /** Pool size per process (default 10): concurrent transactions this instance can hold. */
  max?: number;
  /** How long to wait for a connection before a query fails (default 5000 ms), so an unreachable server is an error, not a hang. */
  connectionTimeoutMillis?: number;
  /**
   * How long one statement may take (default 10000 ms): on the client (pg's `query_timeout`),
   * so a connection the server stopped answering on (a partition, a hung or failing-over
   * server) fails the request with StoreUnavailableError (503) instead of holding it without
   * limit, and on the server (`statement_timeout`), so the statement does not run on after
   * the client gave up. A write whose COMMIT timed out may still have been applied: the 503
   * says "unknown", and a retry with the same Idempotency-Key or If-Match settles it.
   * TCP keep-alive (after 10 s idle) finds a dead peer of an idle pooled connection.
   */
  queryTimeoutMillis?: number;
  /**
   * Told of every error the pool emits outside a query: an idle connection the server
   * dropped (restart, failover, idle timeout on its side). The pool has already
   * discarded that connection and the next query opens a new one, so nothing needs
   * doing here but logging and counting it. Without it such errors are ignored (they
   * must be handled: an unhandled pool 'error' would crash the process).
   * Also told of each statement that met an unreachable server: the statement rejects
   * with `StoreUnavailableError` (./unavailable.ts decides which errors are that), and
   * this hears the same error, so it can be counted and logged once, where it happened.
   */
  onError?: (err: Error) => void;
  /** Told once when a statement succeeds after statements met an unreachable server (the outage is over). */
  onRecovered?: () => void;
}

/** An id PostgreSQL can hold: anything else matches no row (as on SQLite), so it is answered without a query. */
const isId = (n: number): boolean => Number.isSafeInteger(n);
/** A lower bound (`after`, `afterSeq`) as a bigint parameter: `x > 2.5` is `x > 2` for integer columns. */
const lowerBound = (n: number): number => (Number.isNaN(n) ? Number.MAX_SAFE_INTEGER : Math.max(-1, Math.min(Math.floor(n), Number.MAX_SAFE_INTEGER)));

/** The array parameter, per-parent `first` and overall cap of a batch read; ids no row can have (U+0000, non-integers) are left out. */
function batch<K extends string | number>(ids: readonly K[], first: number): [K[], number, number] {
  if (ids.length > MAX_BATCH) throw new RangeError(`PostgresStore: batch of ${ids.length} ids exceeds ${MAX_BATCH}`);
  const distinct = [...new Set(ids)].filter((id) => (typeof id === 'string' ? !id.includes('\u0000') : isId(id)));
  const per = clampRows(first);
  return [distinct, per, distinct.length * per];
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export class PostgresStore extends GraphReads<OrderRow> implements StoreLifecycle, Accounts, Orders, IdempotencyKeys, SocialGraph, FieldReadCounts {
  private readonly pool: Pool;
  private readonly schema?: string;
  private readonly onError: (err: Error) => void;
  private readonly onRecovered: () => void;
  /** A statement met an unreachable server, and none has succeeded since. */
  private unreachable = false;
  private closed = false;
  /** The orders this process is writing (by account and id), with the writes waiting their turn (see `writeOrder`). */
  private readonly writing = new Map<string, WriteTurn>();
  /** Statements executed (transaction control not counted), so tests can prove batching: one query per GraphQL level. */
  queryCount = 0;
  /** Revision reads waiting for this turn's statement (see `orderRevision`). */
  private pendingRevisions: PendingRevision[] = [];
  /** Revision statements in flight (`close` waits for them). */
  private readonly revisionReads = new Set<Promise<void>>();

  /** @param url a `postgres://` connection string. Connects lazily: use `openPostgresStore` to check it answers first. */
  constructor(url: string, options: PostgresStoreOptions = {}) {
    super();
    const { schema, max = 10, queryTimeoutMillis = 10_000, onError = () => {}, onRecovered = () => {} } = options;
    // A new connection waits no longer than a query may (5 s at most): during a partition the
    // pool's connect, not a query, is what a request waits on, and it answers 503 within the same bound.
    const connectionTimeoutMillis = options.connectionTimeoutMillis ?? Math.min(5000, queryTimeoutMillis);
    if (schema !== undefined && !SCHEMA_NAME.test(schema)) throw new RangeError(`PostgresStore: schema must match ${SCHEMA_NAME}, got "${schema}"`);
    this.schema = schema;
    this.onError = onError;
    this.onRecovered = onRecovered;
    const config: PoolConfig = {
      connectionString: url,
      max,
      connectionTimeoutMillis,
      query_timeout: queryTimeoutMillis,
      statement_timeout: queryTimeoutMillis,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      types: TYPES,
    };
    if (schema) config.options = `-c search_path=${schema}`;
    this.pool = new Pool(config);
    // An idle connection the server dropped emits 'error' on the pool; unhandled, that
    // would crash the process. The pool discards the connection itself (see `onError`).
    this.pool.on('error', (err) => onError(err));
  }

  /**
   * The error a statement rejects with: an unreachable server becomes
   * `StoreUnavailableError` (told to `onError` once: a transaction's statement and its
   * `tx` both pass here), anything else is returned as it is.
   */
  private failure(err: unknown): unknown {
    const out = unavailableOr(err);
    if (out !== err && out instanceof Error) {
      this.unreachable = true;
      this.onError(out);
    }
    return out;
  }

  /** A statement succeeded: after an outage, says it is over (once). */
  private answered(): void {
    if (!this.unreachable) return;
    this.unreachable = false;
    this.onRecovered();
  }

  /** Runs one named statement, counted. */
  private async q<R>(on: Pool | PoolClient, name: Statement, values: unknown[] = []): Promise<R[]> {
    this.queryCount++;
    try {
      const res = await on.query({ name: `orderline_${name}`, text: SQL[name], values });
      if (this.unreachable) this.answered();
      return res.rows as R[];
    } catch (err) {
      throw this.failure(err);
    }
  }

  /** Runs one ad hoc statement (migrations, locks), counted. */
  private async exec<R>(on: PoolClient, text: string, values: unknown[] = []): Promise<R[]> {
    this.queryCount++;
    try {
      const rows = (await on.query(text, values)).rows as R[];
      if (this.unreachable) this.answered();
      return rows;
    } catch (err) {
      throw this.failure(err);
    }
  }

  /**
   * Runs `fn` in one transaction on one connection: COMMIT when it resolves, ROLLBACK
   * when it throws (and rethrows). A connection whose ROLLBACK failed is destroyed, not
   * returned to the pool in an unknown state.
   */
  private async tx<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    let c: PoolClient;
    try {
      c = await this.pool.connect();
    } catch (err) {
      throw this.failure(err);
    }
    let broken: Error | undefined;
    try {
      await c.query('BEGIN');
      const out = await fn(c);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      // A connection the server stopped answering on (a statement timed out, a socket cut) is
      // dropped, not asked to ROLLBACK (that would wait out another timeout): the server rolls
      // back a transaction whose connection is gone.
      // (Statements run through `q`/`exec`, which already made such an error a StoreUnavailableError.)
      if (err instanceof StoreUnavailableError || isUnavailable(err)) broken = err instanceof Error ? err : new Error(String(err));
      else await c.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw this.failure(err);
    } finally {
      c.release(broken);
    }
  }

  /**
   * Takes the transaction-scoped advisory lock named `purpose` for this store's schema
   * (released by COMMIT or ROLLBACK, so a crashed process cannot leave it held).
   * Keyed by schema, so stores on other schemas (parallel tests) do not wait for it.
   */
  private async lock(c: PoolClient, purpose: 'migrate' | 'seed'): Promise<void> {
    await this.exec(c, "SELECT pg_advisory_xact_lock(hashtextextended('orderline.' || $1 || ':' || coalesce($2::text, current_schema(), ''), 0))", [purpose, this.schema ?? null]);
  }

  async migrate(): Promise<void> {
    // One transaction under the lock: DDL is transactional in PostgreSQL, so two
    // processes starting together apply each migration exactly once (the second waits,
    // then finds them recorded), and a failing migration leaves nothing half-applied.
    // Existence is checked before any CREATE, so an up-to-date schema needs no DDL rights.
    await this.tx(async (c) => {
      await this.lock(c, 'migrate');
      if (this.schema && (await this.exec<{ missing: boolean }>(c, 'SELECT to_regnamespace($1) IS NULL AS missing', [this.schema]))[0].missing) {
        await this.exec(c, `CREATE SCHEMA "${this.schema}"`);
      }
      if ((await this.exec<{ missing: boolean }>(c, "SELECT to_regclass('schema_migrations') IS NULL AS missing"))[0].missing) {
        await this.exec(c, 'CREATE TABLE schema_migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)');
      }
      const applied = new Set((await this.exec<{ id: number }>(c, 'SELECT id FROM schema_migrations')).map((r) => r.id));
      for (const m of MIGRATIONS) {
        if (applied.has(m.id)) continue;
        await this.exec(c, m.sql);
        await this.exec(c, `INSERT INTO schema_migrations (id, name, applied_at) VALUES ($1, $2, ${NOW})`, [m.id, m.name]);
      }
    });
  }

  async seedDemo(): Promise<boolean> {
    // Under the seed lock, the emptiness check and the load are one step across
    // processes: the second one waits, then sees the users the first committed.
    return this.tx(async (c) => {
      await this.lock(c, 'seed');
      if ((await this.q(c, 'anyUser')).length > 0) return false;
      const ids = new Map<string, number>();
      for (const name of DEMO_ACCOUNTS) ids.set(name, (await this.ensureAccountOn(c, name)).id);
      await this.q(c, 'insertUsers', [DEMO_USERS.map((u) => u.id), DEMO_USERS.map((u) => u.name), DEMO_USERS.map((u) => (u.account ? ids.get(u.account)! : null))]);
      await this.q(c, 'insertFriends', [DEMO_FRIENDS.map(([a]) => a), DEMO_FRIENDS.map(([, b]) => b)]);
      await this.q(c, 'insertPosts', [DEMO_POSTS.map((p) => p.id), DEMO_POSTS.map((p) => p.authorId), DEMO_POSTS.map((p) => p.title)]);
      await this.q(c, 'insertComments', [DEMO_COMMENTS.map((x) => x.id), DEMO_COMMENTS.map((x) => x.postId), DEMO_COMMENTS.map((x) => x.authorId), DEMO_COMMENTS.map((x) => x.body)]);
      // One by one, so ids ascend in the listed order, as on SQLite.
      for (const o of DEMO_ORDERS) await this.createOn(c, ids.get(o.account)!, o.fields);
      return true;
    });
  }

  async ping(): Promise<boolean> {
    return (await this.probe()) === null;
  }

  async deploymentId(): Promise<string> {
    const [row] = await this.q<{ value: string }>(this.pool, 'deploymentId');
    return row.value;
  }

  /** Null when the server answers a trivial query, else why not (for `openPostgresStore`'s message). */
  async probe(): Promise<Error | null> {
    try {
      const [row] = await this.q<{ ok: number }>(this.pool, 'ping');
      return row?.ok === 1 ? null : new Error('unexpected answer to SELECT 1');
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Reads already asked for are answered first, as SqliteStore's are.
    this.flushRevisions();
    await Promise.allSettled([...this.revisionReads]);
    await this.pool.end();
  }

  private async ensureAccountOn(on: Pool | PoolClient, name: string): Promise<Account> {
    // Look first: an INSERT ... ON CONFLICT DO NOTHING would burn an identity value on
    // every call for an existing name. The second SELECT sees a row a concurrent caller
    // committed (READ COMMITTED: a new snapshot per statement).
    const found = await this.q<AccountRow>(on, 'accountByName', [name]);
    if (found[0]) return toAccount(found[0]);
    await this.q(on, 'insertAccount', [storable(name)]);
    return toAccount((await this.q<AccountRow>(on, 'accountByName', [name]))[0]);
  }

  async ensureAccount(name: string): Promise<Account> {
    return this.ensureAccountOn(this.pool, storable(name));
  }

  async findAccount(name: string): Promise<Account | null> {
    const found = await this.q<AccountRow>(this.pool, 'accountByName', [storable(name)]);
    return found[0] ? toAccount(found[0]) : null;
  }

  async addToken(accountId: number, selector: string, verifierHash: string): Promise<void> {
    await this.q(this.pool, 'insertToken', [storable(selector), storable(verifierHash), accountId]);
  }

  async tokenBySelector(selector: string): Promise<{ account: Account; verifierHash: string } | null> {
    // The hash comparison is the caller's (constant time); here only the indexed lookup.
    if (selector.includes('\u0000')) return null; // cannot be stored, so matches nothing
    const [row] = await this.q<AccountRow & { verifier_hash: string }>(this.pool, 'tokenBySelector', [selector]);
    return row ? { account: toAccount(row), verifierHash: row.verifier_hash } : null;
  }

  async listTokens(accountId: number): Promise<TokenInfo[]> {
    const rows = await this.q<{ selector: string; created_at: string }>(this.pool, 'tokensOf', [accountId]);
    return rows.map((r) => ({ selector: r.selector, createdAt: r.created_at }));
  }

  async revokeToken(accountId: number, selector: string): Promise<boolean> {
    if (selector.includes('\u0000')) return false; // cannot be stored, so matches nothing
    this.queryCount++; // as q() counts, which returns rows and not the count this needs
    try {
      const res = await this.pool.query({ name: 'orderline_deleteToken', text: SQL.deleteToken, values: [accountId, selector] });
      return (res.rowCount ?? 0) > 0;
    } catch (err) {
      throw this.failure(err);
    }
  }

  async setPinnedVersion(accountId: number, version: number | null): Promise<void> {
    await this.q(this.pool, 'setPinned', [accountId, version]);
  }

  /** Inserts order + `order.created` event, one statement on `on` (a transaction's connection or the pool). */
  private async createOn(on: Pool | PoolClient, accountId: number, fields: OrderFields): Promise<AppliedWrite> {
    // Built from the row as stored (RETURNING), so it equals what getOrder returns, jsonb's key order included.
    const [row] = await this.q<OrderRow>(on, 'insertOrder', [accountId, ...columnsOf(fields)]);
    const order = toOrder(row);
    return { order, event: { orderId: order.id, accountId, seq: 1, type: 'order.created', order, createdAt: order.createdAt } };
  }

  async createOrder(accountId: number, fields: OrderFields, complete?: IdempotentCompletion<AppliedWrite>): Promise<AppliedWrite> {
    // Without an idempotency key the create is one statement, atomic on its own.
    if (!complete) return this.createOn(this.pool, accountId, fields);
    return this.tx(async (c) => {
      const created = await this.createOn(c, accountId, fields);
      await completeOn(this.runOn(c), accountId, complete, created);
      return created;
    });
  }

  /** The idempotency module's statements run on `c`, counted like every other. */
  private runOn(c: PoolClient): Run {
    return (text, values) => this.exec(c, text, values);
  }

  async claimIdempotencyKey(accountId: number, req: IdempotencyClaimRequest): Promise<IdempotencyClaim> {
    return this.tx((c) => claimOn(this.runOn(c), accountId, { ...req, key: storable(req.key), fingerprint: storable(req.fingerprint) }));
  }

  async completeIdempotencyKey(accountId: number, key: string, token: string, response: StoredResponse): Promise<boolean> {
    return this.tx((c) => completeAfterOn(this.runOn(c), accountId, storable(key), token, response));
  }

  async releaseIdempotencyKey(accountId: number, key: string, token: string): Promise<void> {
    await this.tx((c) => releaseOn(this.runOn(c), accountId, key, token));
  }

  async sweepIdempotencyKeys(now: number, limit: number): Promise<number> {
    return this.tx((c) => sweepOn(this.runOn(c), now, limit));
  }

  async getOrder(accountId: number, orderId: number): Promise<OrderRecord | null> {
    if (!isId(orderId)) return null;
    const [row] = await this.q<OrderRow>(this.pool, 'getOrder', [orderId, accountId]);
    return row ? toOrder(row) : null;
  }

  async latestSeqs(orderIds: readonly number[]): Promise<Map<number, number>> {
    if (orderIds.length > MAX_BATCH) throw new RangeError(`latestSeqs: at most ${MAX_BATCH} ids, got ${orderIds.length}`);
    const ids = orderIds.filter(isId);
    if (ids.length === 0) return new Map();
    const rows = await this.q<{ id: string | number; revision: string | number }>(this.pool, 'latestSeqs', [ids]);
    return new Map(rows.map((r) => [Number(r.id), Number(r.revision)]));
  }

  /**
   * The revision reads asked for in one turn of the event loop go to the server as one
   * statement (`orderRevisions`, one index lookup per distinct order), sent at
   * `setImmediate`, as SqliteStore's reads share a transaction: under load the requests a
   * turn received cost one round trip and one statement's overhead on the server, instead
   * of one each (the order read on PostgreSQL, BENCHMARKS.md "REST against hand-written peers"). A lone
   * read runs the single-row statement. Freshness is unchanged: the statement's snapshot is
   * taken after every request that asked was received. A failure fails every read of it.
   */
  orderRevision(accountId: number, orderId: number): Promise<number | null> {
    // An id no row can have is answered here: in the statement it would fail the turn's other reads.
    if (!isId(orderId) || !isId(accountId)) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      if (this.pendingRevisions.push({ key: `${orderId}:${accountId}`, accountId, orderId, resolve, reject }) === 1) setImmediate(this.flushRevisions);
    });
  }

  private readonly flushRevisions = (): void => {
    const asked = this.pendingRevisions;
    this.pendingRevisions = [];
    for (let i = 0; i < asked.length; i += REVISIONS_PER_STATEMENT) {
      const reading = this.readRevisions(asked.slice(i, i + REVISIONS_PER_STATEMENT));
      this.revisionReads.add(reading);
      void reading.finally(() => this.revisionReads.delete(reading));
    }
  };

  private async readRevisions(asked: PendingRevision[]): Promise<void> {
    try {
      const found = new Map<string, number>();
      if (asked.length === 1) {
        const [{ key, orderId, accountId }] = asked;
        const [row] = await this.q<{ revision: number }>(this.pool, 'orderRevision', [orderId, accountId]);
        if (row) found.set(key, Number(row.revision));
      } else {
        const distinct = new Map(asked.map((a) => [a.key, a]));
        const pairs = [...distinct.values()];
        const rows = await this.q<{ id: number; account_id: number; revision: number }>(this.pool, 'orderRevisions', [pairs.map((a) => a.orderId), pairs.map((a) => a.accountId)]);
        for (const row of rows) found.set(`${row.id}:${row.account_id}`, Number(row.revision));
      }
      for (const a of asked) a.resolve(found.get(a.key) ?? null);
    } catch (error) {
      for (const a of asked) a.reject(error);
    }
  }

  async writeOrder<R>(accountId: number, orderId: number, decide: (current: OrderRecord) => WriteDecision<R>, complete?: IdempotentCompletion<AppliedWrite>): Promise<WriteResult<R>> {
    if (!isId(orderId)) return { ok: false, reason: 'not_found' };
    // An idempotent write completes its key in the write's transaction: the locked path.
    if (complete) return this.lockedWrite(accountId, orderId, decide, complete);
    // This process's writes of one order take turns (FIFO), so they never race each other,
    // and each decides on the row the previous one wrote without reading it again.
    // Keyed by account too: another account's writes of the id (not_found) wait on their own.
    const key = `${accountId}:${orderId}`;
    let turn = this.writing.get(key);
    if (turn) await new Promise<void>((resolve) => turn!.waiting.push(resolve));
    else this.writing.set(key, (turn = { waiting: [] }));
    try {
      // The writes queued behind one the server could not take fail with it, at once,
      // rather than each waiting out the connection timeout in turn.
      if (turn.unavailable) throw turn.unavailable;
      return await this.optimisticWrite(accountId, orderId, decide, turn);
    } catch (err) {
      if (err instanceof StoreUnavailableError) turn.unavailable = err;
      throw err;
    } finally {
      const next = turn.waiting.shift();
      if (next) next();
      else this.writing.delete(key);
    }
  }

  /**
   * Decides on the order as this process last wrote it (or as read), then writes with
   * one statement only if the revision is still the one decided on (compare-and-set,
   * with the event row): one round trip per write while this process has the order's
   * writes queued, two otherwise, against four for BEGIN, lock, write, COMMIT. A race
   * lost to another process reads again and decides on the revision that won; after
   * OPTIMISTIC_ATTEMPTS of those the write queues on the row lock instead.
   */
  private async optimisticWrite<R>(accountId: number, orderId: number, decide: (current: OrderRecord) => WriteDecision<R>, turn: WriteTurn): Promise<WriteResult<R>> {
    let current = turn.last;
    turn.last = undefined; // set again only once this write's outcome is known
    for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
      const read = !current;
      if (!current) {
        const [row] = await this.q<OrderRow>(this.pool, 'getOrder', [orderId, accountId]);
        if (!row) return { ok: false, reason: 'not_found' };
        current = toOrder(row);
      }
      // An order never changes account: another account's caller is told not_found.
      if (current.accountId !== accountId) return { ok: false, reason: 'not_found' };
      const done = await this.applyOn(this.pool, accountId, current, decide);
      if (done?.ok) {
        turn.last = done.order;
        return done;
      }
      // A refusal stands only on a row just read: the remembered one may be older than
      // the order (another process wrote it), and no compare-and-set checks a refusal.
      if (done && read) {
        turn.last = current;
        return done;
      }
      current = undefined;
    }
    return this.lockedWrite(accountId, orderId, decide);
  }

  private lockedWrite<R>(accountId: number, orderId: number, decide: (current: OrderRecord) => WriteDecision<R>, complete?: IdempotentCompletion<AppliedWrite>): Promise<WriteResult<R>> {
    // FOR UPDATE before decide: a concurrent writer of the same order (this process or
    // another) waits for our COMMIT and then decides on the revision we wrote. A
    // throwing `decide` rolls back (nothing was written) and rejects.
    return this.tx(async (c): Promise<WriteResult<R>> => {
      const [row] = await this.q<OrderRow>(c, 'lockOrder', [orderId, accountId]);
      if (!row) return { ok: false, reason: 'not_found' };
      const done = await this.applyOn(c, accountId, toOrder(row), decide);
      // Cannot happen under the row lock; if it did, throwing rolls the transaction back.
      if (!done) throw new Error(`order ${orderId}: revision moved inside a write transaction`);
      if (done.ok && complete) await completeOn(this.runOn(c), accountId, complete, done);
      return done;
    });
  }

  /**
   * Decides on `current` and, when the decision applies, writes it with its event if the
   * order is still at `current`'s revision: the result, or undefined when another write
   * replaced that revision first (nothing written).
   */
  private async applyOn<R>(on: Pool | PoolClient, accountId: number, current: OrderRecord, decide: (current: OrderRecord) => WriteDecision<R>): Promise<WriteResult<R> | undefined> {
    const decision = decide(current);
    if (!decision.apply) return { ok: false, reason: decision.reason };
    const [updated] = await this.q<OrderRow>(on, 'updateOrder', [current.id, current.revision, ...columnsOf(decision.fields), decision.eventType]);
    if (!updated) return undefined;
    const order = toOrder(updated);
    return { ok: true, order, event: { orderId: order.id, accountId, seq: order.revision, type: decision.eventType, order, createdAt: order.updatedAt } };
  }

  async addFieldReads(batch: readonly FieldReads[]): Promise<void> {
    const entries = mergeFieldReads(batch);
    if (entries.length === 0) return;
    await this.q(this.pool, 'addFieldReads', [entries.map((e) => e.accountId), entries.map((e) => e.field), entries.map((e) => e.day), entries.map((e) => e.reads)]);
  }

  async fieldReadTotals(sinceDay: string, limit: number): Promise<FieldReadTotal[]> {
    return this.q<FieldReadTotal>(this.pool, 'fieldReadTotals', [sinceDay, clampRows(limit)]);
  }

  async listOrders(accountId: number, after: number, limit: number): Promise<OrderPage> {
    const n = clampRows(limit);
    const rows = await this.q<OrderRow>(this.pool, 'listOrders', [accountId, lowerBound(after), n + 1]);
    return { orders: rows.slice(0, n).map(toOrder), hasMore: rows.length > n };
  }

  async listRevisions(accountId: number, after: number, limit: number): Promise<RevisionPage> {
    const n = clampRows(limit);
    const rows = await this.q<{ id: number; revision: number }>(this.pool, 'listRevisions', [accountId, lowerBound(after), n + 1]);
    return { orders: rows.slice(0, n).map((r) => ({ id: Number(r.id), revision: Number(r.revision) })), hasMore: rows.length > n };
  }

  async eventsAfter(orderId: number, afterSeq: number, limit: number): Promise<OrderEvent[]> {
    if (!isId(orderId)) return [];
    return (await this.q<EventRow>(this.pool, 'eventsAfter', [orderId, lowerBound(afterSeq), clampRows(limit)])).map(toEvent);
  }

  /** The graph reads' statements (../rows.ts maps and aligns), each one statement of sql.ts per call. */
  protected readonly graphStatements: GraphStatements<OrderRow> = {
    usersByIds: async (ids) => {
      const [distinct, , cap] = batch(ids, 1);
      return this.q<UserRow>(this.pool, 'usersByIds', [distinct, cap]);
    },
    friendsOf: (ids, first) => this.q<UserRow & { parent: string }>(this.pool, 'friendsOf', batch(ids, first)),
    postsOf: (ids, first) => this.q<PostRow>(this.pool, 'postsOf', batch(ids, first)),
    commentsOf: (ids, first) => this.q<CommentRow>(this.pool, 'commentsOf', batch(ids, first)),
    ordersOfAccounts: (ids, first, after) => this.q<OrderRow>(this.pool, 'ordersOfAccounts', [...batch(ids, first), after]),
    userOfAccount: async (accountId) => (isId(accountId) ? (await this.q<UserRow>(this.pool, 'userOfAccount', [accountId]))[0] : undefined),
  };

  protected orderRecord(row: OrderRow): OrderRecord {
    return toOrder(row);
  }

  /**
   * The plan of a statement with sequential scans disabled, for tests that prove reads
   * use an index: on a tiny test table the planner would rightly prefer a scan, but with
   * `enable_seqscan` off it still shows `Seq Scan` when no index can serve the query.
   */
  async explain(statement: Statement, params: unknown[]): Promise<string[]> {
    return this.tx(async (c) => {
      await c.query('SET LOCAL enable_seqscan = off');
      const rows = (await c.query(`EXPLAIN ${SQL[statement]}`, params)).rows as { 'QUERY PLAN': string }[];
      return rows.map((r) => r['QUERY PLAN']);
    });
  }
}

/**
 * A store whose server answered: connects once and runs `SELECT 1`, so a caller (the
 * service's start-up) can refuse a bad `DATABASE_URL` with a clear message instead of
 * failing on the first request. Rejects with "PostgreSQL is not reachable: <cause>"
 * (the cause is pg's, which names host and port but never the password); the pool is
 * closed then. Does not migrate: the caller runs `migrate()` as for SQLite.
 */
export async function openPostgresStore(url: string, options?: PostgresStoreOptions): Promise<PostgresStore> {
  const store = new PostgresStore(url, options);
  const problem = await store.probe();
  if (problem) {
    await store.close();
    throw new Error(`PostgreSQL is not reachable: ${problem.message || String(problem)}`, { cause: problem });
  }
  return store;
}
