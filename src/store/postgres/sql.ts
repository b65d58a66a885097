/**
 * The SQL catalogue of PostgresStore: every statement it runs, by name (prepared by
 * pg under that name on each connection). One place to read the queries and to check
 * them against the indexes in migrations.ts.
 */
export const ORDER_COLUMNS = 'id, account_id, revision, status, items, currency, discount_code, discount_percent, note, created_at, updated_at';
/** The database clock, at the precision `toISOString()` reports; stable within one statement. */
export const NOW = "date_trunc('milliseconds', statement_timestamp())";

/** A timestamptz column as `toISOString()` writes it (UTC, milliseconds, `Z`). */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/**
 * The event payload of the order row named `r`, as jsonb: the object parsers.ts's
 * `toOrder` maps that row to (camelCase fields, `discount` null or `{ code, percent }`,
 * ISO timestamps), built in the statement that writes the row so the write and its event
 * are one statement. The orders contract checks that an event read back equals the order
 * the write returned.
 */
const payloadOf = (r: string) =>
  `jsonb_build_object('id', ${r}.id, 'accountId', ${r}.account_id, 'revision', ${r}.revision, 'status', ${r}.status,
      'items', ${r}.items, 'currency', ${r}.currency,
      'discount', CASE WHEN ${r}.discount_code IS NULL THEN 'null'::jsonb ELSE jsonb_build_object('code', ${r}.discount_code, 'percent', coalesce(${r}.discount_percent, 0)) END,
      'note', ${r}.note, 'createdAt', ${iso(`${r}.created_at`)}, 'updatedAt', ${iso(`${r}.updated_at`)})`;

/**
 * Every statement the store runs, by name. Each runs as a named prepared statement
 * (parsed and planned once per connection). Columns are listed, never `*`, so a later
 * migration adding a column cannot break a statement already prepared on a connection.
 */
export const SQL = {
  ping: 'SELECT 1 AS ok',
  deploymentId: "SELECT value FROM meta WHERE key = 'deployment'",
  accountByName: 'SELECT id, name, pinned_version FROM accounts WHERE name = $1',
  insertAccount: `INSERT INTO accounts (name, created_at) VALUES ($1, ${NOW}) ON CONFLICT (name) DO NOTHING`,
  insertToken: `INSERT INTO tokens (selector, verifier_hash, account_id, created_at) VALUES ($1, $2, $3, ${NOW})`,
  tokenBySelector: `SELECT a.id, a.name, a.pinned_version, t.verifier_hash
    FROM tokens t JOIN accounts a ON a.id = t.account_id WHERE t.selector = $1`,
  tokensOf: 'SELECT selector, created_at FROM tokens WHERE account_id = $1 ORDER BY created_at, selector',
  deleteToken: 'DELETE FROM tokens WHERE account_id = $1 AND selector = $2',
  setPinned: 'UPDATE accounts SET pinned_version = $2 WHERE id = $1',
  anyUser: 'SELECT 1 AS one FROM users LIMIT 1',
  // An order and its event are written by one statement (a data-modifying WITH): atomic
  // without BEGIN and COMMIT, so a create outside a transaction is one round trip.
  insertOrder: `WITH o AS (
      INSERT INTO orders (account_id, revision, status, items, currency, discount_code, discount_percent, note, created_at, updated_at)
      VALUES ($1, 1, $2, $3::jsonb, $4, $5, $6, $7, ${NOW}, ${NOW}) RETURNING ${ORDER_COLUMNS}),
    e AS (INSERT INTO order_events (order_id, seq, account_id, type, payload, created_at)
      SELECT o.id, 1, o.account_id, 'order.created', ${payloadOf('o')}, o.created_at FROM o)
    SELECT ${ORDER_COLUMNS} FROM o`,
  getOrder: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 AND account_id = $2`,
  orderRevision: 'SELECT revision FROM orders WHERE id = $1 AND account_id = $2',
  // One turn's revision reads (see PostgresStore `orderRevision`): $1 and $2 pair ids with accounts.
  orderRevisions: `SELECT o.id, o.account_id, o.revision FROM orders o
    JOIN unnest($1::bigint[], $2::bigint[]) AS k(id, account_id) ON o.id = k.id AND o.account_id = k.account_id`,
  latestSeqs: 'SELECT id, revision FROM orders WHERE id = ANY($1::bigint[])',
  // The row lock is the serialization point of a write in a transaction: a second writer
  // waits here and then reads the row as the first one committed it.
  lockOrder: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 AND account_id = $2 FOR UPDATE`,
  // Compare-and-set on the revision the decision saw ($2), with the event row ($9: its
  // type, seq = the new revision) in the same statement: no row when another write
  // replaced that revision first, and then nothing is written.
  updateOrder: `WITH u AS (
      UPDATE orders SET revision = revision + 1, status = $3, items = $4::jsonb, currency = $5,
        discount_code = $6, discount_percent = $7, note = $8, updated_at = ${NOW}
      WHERE id = $1 AND revision = $2 RETURNING ${ORDER_COLUMNS}),
    e AS (INSERT INTO order_events (order_id, seq, account_id, type, payload, created_at)
      SELECT u.id, u.revision, u.account_id, $9, ${payloadOf('u')}, u.updated_at FROM u)
    SELECT ${ORDER_COLUMNS} FROM u`,
  listOrders: `SELECT ${ORDER_COLUMNS} FROM orders WHERE account_id = $1 AND id > $2::bigint ORDER BY id LIMIT $3`,
  listRevisions: 'SELECT id, revision FROM orders WHERE account_id = $1 AND id > $2::bigint ORDER BY id LIMIT $3',
  eventsAfter: `SELECT order_id, seq, account_id, type, payload, created_at FROM order_events
    WHERE order_id = $1 AND seq > $2::bigint ORDER BY seq LIMIT $3`,
  usersByIds: 'SELECT id, name, account_id FROM users WHERE id = ANY($1::text[]) LIMIT $2',
  friendsOf: `SELECT p.id AS parent, x.id, x.name, x.account_id
    FROM (SELECT DISTINCT unnest($1::text[]) AS id) p
    CROSS JOIN LATERAL (SELECT u.id, u.name, u.account_id FROM friends f JOIN users u ON u.id = f.friend_id
                        WHERE f.user_id = p.id ORDER BY f.friend_id LIMIT $2) x
    ORDER BY p.id, x.id LIMIT $3`,
  postsOf: `SELECT x.id, x.author_id, x.title
    FROM (SELECT DISTINCT unnest($1::text[]) AS id) p
    CROSS JOIN LATERAL (SELECT id, author_id, title FROM posts WHERE author_id = p.id ORDER BY id LIMIT $2) x
    ORDER BY x.author_id, x.id LIMIT $3`,
  commentsOf: `SELECT x.id, x.post_id, x.author_id, x.body
    FROM (SELECT DISTINCT unnest($1::text[]) AS id) p
    CROSS JOIN LATERAL (SELECT id, post_id, author_id, body FROM comments WHERE post_id = p.id ORDER BY id LIMIT $2) x
    ORDER BY x.post_id, x.id LIMIT $3`,
  ordersOfAccounts: `SELECT x.* FROM (SELECT DISTINCT unnest($1::bigint[]) AS id) p
    CROSS JOIN LATERAL (SELECT ${ORDER_COLUMNS} FROM orders WHERE account_id = p.id AND id > $4 ORDER BY id LIMIT $2) x
    ORDER BY x.account_id, x.id LIMIT $3`,
  userOfAccount: 'SELECT id, name, account_id FROM users WHERE account_id = $1',
  // The demo's graph data, one statement per table (arrays of columns).
  insertUsers: 'INSERT INTO users (id, name, account_id) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])',
  insertFriends: 'INSERT INTO friends (user_id, friend_id) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT DO NOTHING',
  insertPosts: 'INSERT INTO posts (id, author_id, title) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])',
  insertComments: 'INSERT INTO comments (id, post_id, author_id, body) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])',
  // One statement per batch (mergeFieldReads made its keys distinct): atomic, and concurrent batches add up under the row locks.
  addFieldReads: `INSERT INTO field_reads (account_id, field, day, reads) SELECT * FROM unnest($1::bigint[], $2::text[], $3::date[], $4::bigint[])
    ON CONFLICT (account_id, field, day) DO UPDATE SET reads = field_reads.reads + excluded.reads`,
  fieldReadTotals: `SELECT a.name AS account, r.field, sum(r.reads)::bigint AS reads FROM field_reads r JOIN accounts a ON a.id = r.account_id
    WHERE r.day >= $1::date GROUP BY a.name, r.field ORDER BY reads DESC, a.name COLLATE "C", r.field LIMIT $2`,
} as const;
export type Statement = keyof typeof SQL;
