/**
 * Ordered schema migrations; `schema_migrations` records which ran, by id. Never edit
 * a shipped one, append: a data directory made by an earlier release has the old
 * migration recorded and would never see the edit (migration 1 shipped with the first
 * release, so the split-token change is migration 2, not an edit of 1).
 */
export const MIGRATIONS: readonly { id: number; name: string; sql: string }[] = [
  {
    id: 1,
    name: 'accounts, tokens, orders, order events, graph data',
    sql: `
      CREATE TABLE accounts (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        pinned_version INTEGER NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE tokens (
        token_hash TEXT PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        created_at TEXT NOT NULL
      );
      CREATE TABLE orders (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        revision INTEGER NOT NULL,
        status TEXT NOT NULL,
        items TEXT NOT NULL,
        currency TEXT NOT NULL,
        discount_code TEXT NULL,
        discount_percent INTEGER NULL,
        note TEXT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX orders_account_id ON orders(account_id, id);
      -- The transactional outbox: one row per applied write, seq = the order's revision.
      CREATE TABLE order_events (
        order_id INTEGER NOT NULL REFERENCES orders(id),
        seq INTEGER NOT NULL,
        account_id INTEGER NOT NULL,
        type TEXT NOT NULL,
        payload TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (order_id, seq)
      ) WITHOUT ROWID;
      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        account_id INTEGER NULL UNIQUE REFERENCES accounts(id)
      );
      CREATE TABLE friends (
        user_id TEXT NOT NULL REFERENCES users(id),
        friend_id TEXT NOT NULL REFERENCES users(id),
        PRIMARY KEY (user_id, friend_id)
      ) WITHOUT ROWID;
      CREATE TABLE posts (
        id TEXT PRIMARY KEY,
        author_id TEXT NOT NULL REFERENCES users(id),
        title TEXT NOT NULL
      );
      CREATE INDEX posts_author ON posts(author_id, id);
      CREATE TABLE comments (
        id TEXT PRIMARY KEY,
        post_id TEXT NOT NULL REFERENCES posts(id),
        author_id TEXT NOT NULL REFERENCES users(id),
        body TEXT NOT NULL
      );
      CREATE INDEX comments_post ON comments(post_id, id);
    `,
  },
  {
    id: 2,
    name: 'split tokens (selector + verifier hash)',
    // Split tokens: the selector finds the row, the verifier is kept only as a hash.
    // Old whole-token hashes cannot be turned into selectors, so tokens issued before
    // this migration stop working: `npm run token` (or a restart, for the demo token)
    // issues new ones.
    sql: `
      DROP TABLE tokens;
      CREATE TABLE tokens (
        selector TEXT PRIMARY KEY,
        verifier_hash TEXT NOT NULL,
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        created_at TEXT NOT NULL
      );
    `,
  },
  {
    id: 3,
    name: 'idempotency keys',
    // One row per (account, key); times in epoch milliseconds. `status` is NULL while the
    // first request runs; the response columns are written by the order write's transaction.
    sql: `
      CREATE TABLE idempotency_keys (
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        token TEXT NOT NULL,
        locked_until INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        status INTEGER NULL,
        headers TEXT NULL,
        body TEXT NULL,
        PRIMARY KEY (account_id, key)
      );
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys(expires_at);
    `,
  },
  {
    id: 4,
    name: 'deprecated field reads per account and day',
    // Deprecated-field read volume per client, flushed in batches (http/fieldReads.ts). `day` is
    // the UTC date as YYYY-MM-DD text, which sorts and compares as dates do.
    sql: `
      CREATE TABLE field_reads (
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        field TEXT NOT NULL,
        day TEXT NOT NULL,
        reads INTEGER NOT NULL,
        PRIMARY KEY (account_id, field, day)
      ) WITHOUT ROWID;
    `,
  },
  {
    id: 5,
    name: 'the deployment id',
    // StoreLifecycle.deploymentId: made once, here, so every process on this file reads the same one.
    sql: `
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      INSERT INTO meta (key, value) VALUES ('deployment', lower(hex(randomblob(16))));
    `,
  },
];
