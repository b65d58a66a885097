/**
 * What the hand-written peers (koa-orders.ts, fastify-orders.ts) share: their own SQLite
 * file in DATA_DIR with one account's token and one order shaped like the service's demo
 * order 1, a bearer lookup (SHA-256 of the token, answers cached in memory), one
 * prepared SELECT and one prepared UPDATE, and the JSON body with `_links`. This is
 * what a competent developer writes by hand for the same resource, without a contract.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** The token the bench sends to every peer. */
export const PEER_TOKEN = 'peer-token-0123456789abcdef';

export function openPeerStore(dir = process.env.DATA_DIR ?? '.') {
  const db = new Database(join(dir, 'peer.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`
    CREATE TABLE IF NOT EXISTS tokens (hash TEXT PRIMARY KEY, account_id INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS orders (
      id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL, revision INTEGER NOT NULL, status TEXT NOT NULL,
      items TEXT NOT NULL, currency TEXT NOT NULL, discount_code TEXT, discount_percent INTEGER, note TEXT,
      created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
  `);
  const hash = (token: string) => createHash('sha256').update(token).digest('hex');
  db.prepare('INSERT OR IGNORE INTO tokens (hash, account_id) VALUES (?, 1)').run(hash(PEER_TOKEN));
  const now = new Date().toISOString();
  db.prepare(`INSERT OR IGNORE INTO orders VALUES (1, 1, 1, 'pending', ?, 'EUR', 'WELCOME', 10, 'first order', ?, ?)`).run(
    JSON.stringify([
      { sku: 'TEA-1', quantity: 2, unit_price_cents: 450 },
      { sku: 'MUG-2', quantity: 1, unit_price_cents: 1200 },
    ]),
    now,
    now,
  );

  const tokenStmt = db.prepare('SELECT account_id FROM tokens WHERE hash = ?');
  const select = db.prepare('SELECT * FROM orders WHERE id = ? AND account_id = ?');
  const update = db.prepare('UPDATE orders SET note = ?, revision = revision + 1, updated_at = ? WHERE id = ? AND account_id = ? RETURNING *');
  const cache = new Map<string, number>();

  return {
    /** The account of `Authorization: Bearer <token>`, or undefined. */
    account(authorization: string | undefined): number | undefined {
      if (!authorization?.startsWith('Bearer ')) return undefined;
      const h = hash(authorization.slice(7));
      let id = cache.get(h);
      if (id === undefined) {
        id = (tokenStmt.get(h) as { account_id: number } | undefined)?.account_id;
        if (id !== undefined) cache.set(h, id);
      }
      return id;
    },
    get: (id: number, account: number) => select.get(id, account) as Row | undefined,
    setNote: (id: number, account: number, note: unknown) => update.get(typeof note === 'string' ? note : null, new Date().toISOString(), id, account) as Row | undefined,
  };
}

interface Row {
  id: number;
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

/** The order as JSON, the same members as the service's version 2 representation. */
export function representation(r: Row) {
  const items = JSON.parse(r.items) as { quantity: number; unit_price_cents: number }[];
  const gross = items.reduce((s, i) => s + i.quantity * i.unit_price_cents, 0);
  const percent = r.discount_percent ?? 0;
  const self = `/orders/${r.id}`;
  return {
    id: r.id,
    status: r.status,
    items,
    total_cents: gross - Math.floor((gross * percent + 50) / 100),
    currency: r.currency,
    discount: r.discount_code ? { code: r.discount_code, percent } : null,
    note: r.note,
    created_at: r.created_at,
    updated_at: r.updated_at,
    _links: { self: { href: self }, ...(r.status === 'pending' || r.status === 'paid' ? { cancel: { href: `${self}/cancel` } } : {}) },
  };
}

export function listen(server: { listen: (port: number, host: string, cb: () => void) => unknown }, port: number, host: string): void {
  server.listen(port, host, () => process.stdout.write(`listening on http://${host}:${port}\n`));
}
