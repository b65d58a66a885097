/**
 * peer-data.ts's store on PostgreSQL (pg.Pool, 10 connections as the service's default),
 * for the hand-written peers on the same database as the service: its own schema
 * (PEER_DATABASE_SCHEMA, created with its tables and the demo orders), the service's
 * column types (bigint identity ids, jsonb items and payloads, timestamptz), named prepared
 * statements, and the transactions a hand-written service would write: POST is INSERT
 * order + INSERT event; PATCH is SELECT ... FOR UPDATE, If-Match check, UPDATE ...
 * RETURNING, INSERT event, each between BEGIN and COMMIT on one pooled connection. (The
 * service's PostgresStore does the same work in fewer round trips: one statement per
 * create, a compare-and-set statement per write.)
 */
import { Pool, types as pgTypes, type PoolClient } from 'pg';
import { PEER_TOKEN, SEED_ORDERS, etagOf, hashToken, ifMatchPasses, mergePatch, type Fields, type PatchResult, type PeerStore, type Row } from './peer-data';

const COLUMNS = 'id, account_id, revision, status, items, currency, discount_code, discount_percent, note, created_at, updated_at';
const SQL = {
  token: 'SELECT account_id FROM tokens WHERE hash = $1',
  get: `SELECT ${COLUMNS} FROM orders WHERE id = $1 AND account_id = $2`,
  list: `SELECT ${COLUMNS} FROM orders WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
  insert: `INSERT INTO orders (account_id, revision, status, items, currency, discount_code, discount_percent, note, created_at, updated_at)
    VALUES ($1, 1, $2, $3::jsonb, $4, $5, $6, $7, now(), now()) RETURNING ${COLUMNS}`,
  lock: `SELECT ${COLUMNS} FROM orders WHERE id = $1 AND account_id = $2 FOR UPDATE`,
  update: `UPDATE orders SET revision = revision + 1, items = $3::jsonb, currency = $4, discount_code = $5, discount_percent = $6,
      note = $7, updated_at = now() WHERE id = $1 AND revision = $2 RETURNING ${COLUMNS}`,
  event: 'INSERT INTO order_events (order_id, seq, account_id, type, payload, created_at) VALUES ($1, $2, $3, $4, $5::jsonb, $6)',
} as const;

const SCHEMA = (name: string) => `
  CREATE SCHEMA IF NOT EXISTS "${name}";
  SET search_path TO "${name}";
  -- The service's integrity rules: an order and a token belong to an existing account (a foreign key,
  -- whose check takes a KEY SHARE lock on the account row at every insert, as the service's does).
  CREATE TABLE IF NOT EXISTS accounts (id bigint PRIMARY KEY);
  INSERT INTO accounts (id) VALUES (1), (2) ON CONFLICT DO NOTHING;
  CREATE TABLE IF NOT EXISTS tokens (hash text PRIMARY KEY, account_id bigint NOT NULL REFERENCES accounts(id));
  CREATE TABLE IF NOT EXISTS orders (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, account_id bigint NOT NULL REFERENCES accounts(id), revision integer NOT NULL,
    status text NOT NULL, items jsonb NOT NULL, currency text NOT NULL, discount_code text, discount_percent integer,
    note text, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL);
  CREATE INDEX IF NOT EXISTS orders_account_id ON orders(account_id, id);
  CREATE TABLE IF NOT EXISTS order_events (
    order_id bigint NOT NULL REFERENCES orders(id), seq integer NOT NULL, account_id bigint NOT NULL, type text NOT NULL,
    payload jsonb NOT NULL, created_at timestamptz NOT NULL, PRIMARY KEY (order_id, seq));
`;

const columns = (f: Fields) => [JSON.stringify(f.items), f.currency, f.discount_code, f.discount_percent, f.note];

export async function openPgPeerStore(url = process.env.PEER_DATABASE_URL, schema = process.env.PEER_DATABASE_SCHEMA): Promise<PeerStore> {
  if (!url || !schema || !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error('PEER_DATABASE_URL and PEER_DATABASE_SCHEMA (a lowercase identifier) are required');
  // bigint ids as numbers (as the service maps them); timestamptz stays a Date (JSON writes it as ISO).
  const int8: number = pgTypes.builtins.INT8;
  const types = { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === int8 ? Number : (pgTypes.getTypeParser(oid, format) as (value: string) => unknown))) as typeof pgTypes.getTypeParser };
  const pool = new Pool({ connectionString: url, max: 10, options: `-c search_path=${schema}`, types });
  pool.on('error', () => {});
  const q = async (on: Pool | PoolClient, name: keyof typeof SQL, values: unknown[]) => (await on.query<Row>({ name: `peer_${name}`, text: SQL[name], values })).rows;
  async function tx<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      const out = await fn(c);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      c.release();
    }
  }
  const createOn = async (c: PoolClient, account: number, status: string, f: Fields) => {
    const [row] = await q(c, 'insert', [account, status, ...columns(f)]);
    await q(c, 'event', [row.id, 1, account, 'order.created', JSON.stringify(row), row.created_at]);
    return row;
  };

  await tx(async (c) => {
    await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`peer:${schema}`]);
    await c.query(SCHEMA(schema));
    await c.query('INSERT INTO tokens (hash, account_id) VALUES ($1, 1) ON CONFLICT DO NOTHING', [hashToken(PEER_TOKEN)]);
    if ((await c.query('SELECT 1 FROM orders LIMIT 1')).rowCount === 0) for (const o of SEED_ORDERS) await createOn(c, o.account, o.status, o.fields);
  });

  const cache = new Map<string, number>();
  return {
    async account(authorization) {
      if (!authorization?.startsWith('Bearer ')) return undefined;
      // Cached by the token as sent, as the service's auth cache is: the hash only on a miss.
      const token = authorization.slice(7);
      let id = cache.get(token);
      if (id === undefined) {
        id = ((await pool.query<{ account_id: number }>({ name: 'peer_token', text: SQL.token, values: [hashToken(token)] })).rows[0] as { account_id: number } | undefined)?.account_id;
        if (id !== undefined) cache.set(token, id);
      }
      return id;
    },
    get: async (id, account) => (Number.isSafeInteger(id) ? (await q(pool, 'get', [id, account]))[0] : undefined),
    async list(account, after, limit) {
      const rows = await q(pool, 'list', [account, after, limit + 1]);
      return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
    },
    create: (account, fields) => tx((c) => createOn(c, account, 'pending', fields)),
    patch: (id, account, ifMatch, patch) =>
      !Number.isSafeInteger(id)
        ? Promise.resolve({ status: 404 })
        : tx(async (c): Promise<PatchResult> => {
            const [row] = await q(c, 'lock', [id, account]);
            if (!row) return { status: 404 };
            if (ifMatch === undefined) return { status: 428 };
            if (!ifMatchPasses(ifMatch, etagOf(row))) return { status: 412 };
            const next = mergePatch(row, patch);
            if (next === null) return { status: 200, row };
            const [updated] = await q(c, 'update', [id, row.revision, ...columns(next)]);
            if (!updated) throw new Error(`order ${id}: revision moved inside a write transaction`);
            await q(c, 'event', [id, updated.revision, account, 'order.updated', JSON.stringify(updated), updated.updated_at]);
            return { status: 200, row: updated };
          }),
  };
}
