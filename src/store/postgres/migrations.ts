/**
 * Ordered PostgreSQL schema migrations; `schema_migrations` records which ran, by id.
 * Never edit a shipped one, append (see `../sqlite/migrations.ts` for why).
 *
 * The logical tables are SQLite's, so both adapters answer the port identically. The
 * ids here are this adapter's own history: PostgreSQL shipped after SQLite's split-token
 * change, so migration 1 already has the split `tokens` table.
 *
 * Type choices, each for the port's behaviour:
 * - ids are `bigint` identities (never reused, unlike SQLite's rowid without
 *   AUTOINCREMENT; `orders` used AUTOINCREMENT there for the same reason);
 * - `revision` / `seq` are `integer`: 2^31 writes to one order is beyond any use;
 * - text keys of the graph (`users.id`, `posts.id`, ...) are `COLLATE "C"`, byte
 *   order, which is SQLite's BINARY: "stable order" and the `first` cut must pick the
 *   same rows on both adapters whatever the database's default collation;
 * - `items` and the event `payload` are `jsonb`; `discount` keeps SQLite's two columns
 *   (`discount_code`, `discount_percent`), so "no discount" is one NULL, not a JSON null;
 * - times are `timestamptz`, written truncated to milliseconds so the stored value is
 *   exactly the ISO string the port reports (`toISOString()` has millisecond precision).
 */
export const MIGRATIONS: readonly { id: number; name: string; sql: string }[] = [
  {
    id: 1,
    name: 'accounts, tokens, orders, order events, graph data',
    sql: `
      CREATE TABLE accounts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name text NOT NULL UNIQUE,
        pinned_version integer NULL,
        created_at timestamptz NOT NULL
      );
      CREATE TABLE tokens (
        selector text PRIMARY KEY,
        verifier_hash text NOT NULL,
        account_id bigint NOT NULL REFERENCES accounts(id),
        created_at timestamptz NOT NULL
      );
      CREATE TABLE orders (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id bigint NOT NULL REFERENCES accounts(id),
        revision integer NOT NULL,
        status text NOT NULL,
        items jsonb NOT NULL,
        currency text NOT NULL,
        discount_code text NULL,
        discount_percent integer NULL,
        note text NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      );
      CREATE INDEX orders_account_id ON orders(account_id, id);
      -- The transactional outbox: one row per applied write, seq = the order's revision.
      CREATE TABLE order_events (
        order_id bigint NOT NULL REFERENCES orders(id),
        seq integer NOT NULL,
        account_id bigint NOT NULL,
        type text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (order_id, seq)
      );
      CREATE TABLE users (
        id text COLLATE "C" PRIMARY KEY,
        name text NOT NULL,
        account_id bigint NULL UNIQUE REFERENCES accounts(id)
      );
      CREATE TABLE friends (
        user_id text COLLATE "C" NOT NULL REFERENCES users(id),
        friend_id text COLLATE "C" NOT NULL REFERENCES users(id),
        PRIMARY KEY (user_id, friend_id)
      );
      CREATE TABLE posts (
        id text COLLATE "C" PRIMARY KEY,
        author_id text COLLATE "C" NOT NULL REFERENCES users(id),
        title text NOT NULL
      );
      CREATE INDEX posts_author ON posts(author_id, id);
      CREATE TABLE comments (
        id text COLLATE "C" PRIMARY KEY,
        post_id text COLLATE "C" NOT NULL REFERENCES posts(id),
        author_id text COLLATE "C" NOT NULL REFERENCES users(id),
        body text NOT NULL
      );
      CREATE INDEX comments_post ON comments(post_id, id);
    `,
  },
  {
    id: 2,
    name: 'idempotency keys',
    // As SQLite's migration 3: one row per (account, key), epoch milliseconds.
    sql: `
      CREATE TABLE idempotency_keys (
        account_id bigint NOT NULL REFERENCES accounts(id),
        key text COLLATE "C" NOT NULL,
        fingerprint text NOT NULL,
        token text NOT NULL,
        locked_until bigint NOT NULL,
        expires_at bigint NOT NULL,
        status integer NULL,
        headers text NULL,
        body text NULL,
        PRIMARY KEY (account_id, key)
      );
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys(expires_at);
    `,
  },
  {
    id: 3,
    name: 'deprecated field reads per account and day',
    // As SQLite's migration 4; `day` is a date here (an operator's SQL can use date arithmetic).
    sql: `
      CREATE TABLE field_reads (
        account_id bigint NOT NULL REFERENCES accounts(id),
        field text COLLATE "C" NOT NULL,
        day date NOT NULL,
        reads bigint NOT NULL,
        PRIMARY KEY (account_id, field, day)
      );
    `,
  },
  {
    id: 4,
    name: 'the deployment id',
    // As SQLite's migration 5.
    sql: `
      CREATE TABLE meta (key text COLLATE "C" PRIMARY KEY, value text NOT NULL);
      INSERT INTO meta (key, value) VALUES ('deployment', replace(gen_random_uuid()::text, '-', ''));
    `,
  },
];
