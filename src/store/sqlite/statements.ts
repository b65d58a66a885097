/**
 * The SQL catalogue of SqliteStore: every statement it runs after `migrate()`,
 * prepared once on its connection.
 */
import type Database from 'better-sqlite3';
import type { AccountRow, CommentRow, PostRow, UserRow } from '../rows';
import type { BatchParams, EventRow, OrderColumns, OrderRow } from './parsers';

/*
 * Every bound LIMIT is written `LIMIT +?`, never `LIMIT ?`. SQLite (3.53, built with STAT4
 * as better-sqlite3 ships it) reads a bare bound LIMIT's value while planning and so marks
 * the statement to be prepared again whenever that parameter is bound: every execution.
 * The unary plus makes it an expression the planner does not read; the plans are the same
 * (SqliteStore.test.ts checks each read's index), and the friends read of the GraphQL
 * benchmark's query costs 4.6 instead of 10.7 us (BENCHMARKS.md, "LIMIT +?").
 */
export function prepareStatements(db: Database.Database) {
  // The batch reads below are one statement per call whatever the number of parents:
  // the ids come as one JSON array (DISTINCT, so a repeated id cannot eat into
  // another's `first`), each parent's children are found through an index on
  // (parent, id), ROW_NUMBER keeps at most `first` per parent, and `cap`
  // (distinct parents x first) bounds the whole result.
  return {
    accountByName: db.prepare<[string], AccountRow>('SELECT id, name, pinned_version FROM accounts WHERE name = ? LIMIT 1'),
    insertAccount: db.prepare<[string, string]>('INSERT INTO accounts (name, created_at) VALUES (?, ?) ON CONFLICT(name) DO NOTHING'),
    insertToken: db.prepare<[string, string, number, string]>('INSERT INTO tokens (selector, verifier_hash, account_id, created_at) VALUES (?, ?, ?, ?)'),
    tokenBySelector: db.prepare<[string], AccountRow & { verifier_hash: string }>(
      `SELECT a.id, a.name, a.pinned_version, t.verifier_hash
       FROM tokens t JOIN accounts a ON a.id = t.account_id WHERE t.selector = ? LIMIT 1`,
    ),
    tokensOf: db.prepare<[number], { selector: string; created_at: string }>('SELECT selector, created_at FROM tokens WHERE account_id = ? ORDER BY created_at, selector'),
    deleteToken: db.prepare<[number, string]>('DELETE FROM tokens WHERE account_id = ? AND selector = ?'),
    setPinned: db.prepare<[number | null, number]>('UPDATE accounts SET pinned_version = ? WHERE id = ?'),
    // The demo is loaded when no graph data exists: accounts may already exist (`npm run token` first).
    anyUser: db.prepare<[], { one: number }>('SELECT 1 AS one FROM users LIMIT 1'),
    insertOrder: db.prepare<[OrderColumns & { account_id: number; now: string }]>(
      `INSERT INTO orders (account_id, revision, status, items, currency, discount_code, discount_percent, note, created_at, updated_at)
       VALUES (@account_id, 1, @status, @items, @currency, @discount_code, @discount_percent, @note, @now, @now)`,
    ),
    getOrder: db.prepare<[number, number], OrderRow>('SELECT * FROM orders WHERE id = ? AND account_id = ? LIMIT 1'),
    orderRevision: db.prepare<[number, number], number>('SELECT revision FROM orders WHERE id = ? AND account_id = ? LIMIT 1').pluck(),
    latestSeqs: db.prepare<[string], { id: number; revision: number }>('SELECT id, revision FROM orders WHERE id IN (SELECT value FROM json_each(?))'),
    updateOrder: db.prepare<[OrderColumns & { id: number; revision: number; now: string }]>(
      `UPDATE orders SET revision = revision + 1, status = @status, items = @items, currency = @currency,
         discount_code = @discount_code, discount_percent = @discount_percent, note = @note, updated_at = @now
       WHERE id = @id AND revision = @revision`,
    ),
    insertEvent: db.prepare<[number, number, number, string, string, string]>('INSERT INTO order_events (order_id, seq, account_id, type, payload, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
    // One turn's reads in one read transaction (SqliteStore.turnRead).
    beginRead: db.prepare('BEGIN'),
    commitRead: db.prepare('COMMIT'),
    // One order write of a group commit each (SqliteStore.batched): rolled back alone when it throws.
    savepoint: db.prepare('SAVEPOINT order_write'),
    releaseSavepoint: db.prepare('RELEASE order_write'),
    rollbackToSavepoint: db.prepare('ROLLBACK TO order_write'),
    listOrders: db.prepare<[number, number, number], OrderRow>('SELECT * FROM orders WHERE account_id = ? AND id > ? ORDER BY id LIMIT +?'),
    // Rows as arrays (`raw`): no object per row.
    listRevisions: db.prepare<[number, number, number], [number, number]>('SELECT id, revision FROM orders WHERE account_id = ? AND id > ? ORDER BY id LIMIT +?').raw(true),
    eventsAfter: db.prepare<[number, number, number], EventRow>('SELECT * FROM order_events WHERE order_id = ? AND seq > ? ORDER BY seq LIMIT +?'),
    usersByIds: db.prepare<[string, number], UserRow>('SELECT u.id, u.name, u.account_id FROM (SELECT DISTINCT value FROM json_each(?)) j JOIN users u ON u.id = j.value LIMIT +?'),
    friendsOf: db.prepare<[BatchParams], UserRow & { parent: string }>(
      `SELECT parent, id, name, account_id FROM (
         SELECT f.user_id AS parent, u.id, u.name, u.account_id,
                ROW_NUMBER() OVER (PARTITION BY f.user_id ORDER BY f.friend_id) AS rn
         FROM (SELECT DISTINCT value FROM json_each(@ids)) j
         JOIN friends f ON f.user_id = j.value
         JOIN users u ON u.id = f.friend_id)
       WHERE rn <= @first ORDER BY parent, id LIMIT +@cap`,
    ),
    postsOf: db.prepare<[BatchParams], PostRow>(
      `SELECT id, author_id, title FROM (
         SELECT p.id, p.author_id, p.title, ROW_NUMBER() OVER (PARTITION BY p.author_id ORDER BY p.id) AS rn
         FROM (SELECT DISTINCT value FROM json_each(@ids)) j JOIN posts p ON p.author_id = j.value)
       WHERE rn <= @first ORDER BY author_id, id LIMIT +@cap`,
    ),
    commentsOf: db.prepare<[BatchParams], CommentRow>(
      `SELECT id, post_id, author_id, body FROM (
         SELECT c.id, c.post_id, c.author_id, c.body, ROW_NUMBER() OVER (PARTITION BY c.post_id ORDER BY c.id) AS rn
         FROM (SELECT DISTINCT value FROM json_each(@ids)) j JOIN comments c ON c.post_id = j.value)
       WHERE rn <= @first ORDER BY post_id, id LIMIT +@cap`,
    ),
    ordersOfAccounts: db.prepare<[BatchParams & { after: number }], OrderRow>(
      `SELECT id, account_id, revision, status, items, currency, discount_code, discount_percent, note, created_at, updated_at FROM (
         SELECT o.*, ROW_NUMBER() OVER (PARTITION BY o.account_id ORDER BY o.id) AS rn
         FROM (SELECT DISTINCT value FROM json_each(@ids)) j JOIN orders o ON o.account_id = j.value AND o.id > @after)
       WHERE rn <= @first ORDER BY account_id, id LIMIT +@cap`,
    ),
    // A batch of one parent (every root field, and any level with one node) skips
    // json_each, DISTINCT, the window function and its sorts: the same rows in the
    // same order, about half the time per statement (BENCHMARKS.md, GraphQL profile).
    userById: db.prepare<[string], UserRow>('SELECT id, name, account_id FROM users WHERE id = ? LIMIT 1'),
    friendsOfOne: db.prepare<[string, number], UserRow & { parent: string }>(
      `SELECT f.user_id AS parent, u.id, u.name, u.account_id
       FROM friends f JOIN users u ON u.id = f.friend_id WHERE f.user_id = ? ORDER BY f.friend_id LIMIT +?`,
    ),
    postsOfOne: db.prepare<[string, number], PostRow>('SELECT id, author_id, title FROM posts WHERE author_id = ? ORDER BY id LIMIT +?'),
    commentsOfOne: db.prepare<[string, number], CommentRow>('SELECT id, post_id, author_id, body FROM comments WHERE post_id = ? ORDER BY id LIMIT +?'),
    ordersOfOne: db.prepare<[number, number, number], OrderRow>(
      `SELECT id, account_id, revision, status, items, currency, discount_code, discount_percent, note, created_at, updated_at
       FROM orders WHERE account_id = ? AND id > ? ORDER BY id LIMIT +?`,
    ),
    userOfAccount: db.prepare<[number], UserRow>('SELECT id, name, account_id FROM users WHERE account_id = ? LIMIT 1'),
    insertUser: db.prepare<[string, string, number | null]>('INSERT INTO users (id, name, account_id) VALUES (?, ?, ?)'),
    insertFriend: db.prepare<[string, string]>('INSERT OR IGNORE INTO friends (user_id, friend_id) VALUES (?, ?)'),
    insertPost: db.prepare<[string, string, string]>('INSERT INTO posts (id, author_id, title) VALUES (?, ?, ?)'),
    insertComment: db.prepare<[string, string, string, string]>('INSERT INTO comments (id, post_id, author_id, body) VALUES (?, ?, ?, ?)'),
    addFieldReads: db.prepare<[number, string, string, number]>(
      'INSERT INTO field_reads (account_id, field, day, reads) VALUES (?, ?, ?, ?) ON CONFLICT (account_id, field, day) DO UPDATE SET reads = reads + excluded.reads',
    ),
    fieldReadTotals: db.prepare<[string, number], { account: string; field: string; reads: number }>(
      `SELECT a.name AS account, r.field, sum(r.reads) AS reads FROM field_reads r JOIN accounts a ON a.id = r.account_id
       WHERE r.day >= ? GROUP BY r.account_id, r.field ORDER BY reads DESC, a.name, r.field LIMIT +?`,
    ),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
