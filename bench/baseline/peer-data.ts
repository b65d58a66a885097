/**
 * What the hand-written peers share (koa-peer.ts and fastify-peer.ts, on SQLite through
 * this file or on PostgreSQL through peer-pg.ts): the token the bench sends, the data
 * (the service's demo accounts and orders, so ids 1-5 are account 1's and 6-7 account
 * 2's on every side), and the per-request work a competent developer writes by hand for
 * the same resource without a contract:
 * - a bearer lookup (SHA-256 of the token, the answer cached in memory);
 * - GET one: one SELECT, the ETag from the revision in the service's format
 *   (`"<id>-<revision>-v2j"`), the 304 left to the framework's conditional middleware;
 * - GET list: keyset paging (`WHERE account_id = ? AND id > ? ORDER BY id LIMIT n+1`),
 *   the same opaque cursor format and `_links.self` / `_links.next` as the service;
 * - POST: the order and its `order.created` event row in one transaction, 201 with
 *   Location and ETag;
 * - PATCH (merge patch of items, currency, discount, note): in one transaction read the
 *   row, check If-Match against its revision (428 without one, 412 on mismatch; `*`
 *   matches), answer a patch that changes nothing without writing, else bump the revision
 *   and append an `order.updated` event row.
 * What they do not do: validate against a schema, negotiate versions, keep metrics, logs.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DEMO_ACCOUNTS, DEMO_ORDERS } from '../../src/store/demo';

/** The token the bench sends to every peer. */
export const PEER_TOKEN = 'peer-token-0123456789abcdef';

export interface Item {
  sku: string;
  quantity: number;
  unit_price_cents: number;
}

/** An order row: `items` is JSON text on SQLite, parsed jsonb on PostgreSQL; times ISO text or Date. */
export interface Row {
  id: number;
  account_id: number;
  revision: number;
  status: string;
  items: string | Item[];
  currency: string;
  discount_code: string | null;
  discount_percent: number | null;
  note: string | null;
  created_at: string | Date;
  updated_at: string | Date;
}

/** The writable columns of an order. */
export interface Fields {
  items: Item[];
  currency: string;
  discount_code: string | null;
  discount_percent: number | null;
  note: string | null;
}

export type PatchResult = { status: 200; row: Row } | { status: 404 | 412 | 428 };
export interface Page {
  rows: Row[];
  hasMore: boolean;
}

/** Either store; SQLite answers synchronously, PostgreSQL with promises (handlers await both). */
type Maybe<T> = T | Promise<T>;
export interface PeerStore {
  /** The account of `Authorization: Bearer <token>`, or undefined. */
  account(authorization: string | undefined): Maybe<number | undefined>;
  get(id: number, account: number): Maybe<Row | undefined>;
  list(account: number, after: number, limit: number): Maybe<Page>;
  create(account: number, fields: Fields): Maybe<Row>;
  patch(id: number, account: number, ifMatch: string | undefined, patch: Record<string, unknown>): Maybe<PatchResult>;
}

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** The demo orders as (account number, fields): account 1 is `demo`, 2 is `acme`. */
export const SEED_ORDERS = DEMO_ORDERS.map((o) => ({
  account: DEMO_ACCOUNTS.indexOf(o.account) + 1,
  status: o.fields.status,
  fields: {
    items: o.fields.items,
    currency: o.fields.currency,
    discount_code: o.fields.discount?.code ?? null,
    discount_percent: o.fields.discount?.percent ?? null,
    note: o.fields.note,
  } satisfies Fields,
}));

export const itemsOf = (r: Row): Item[] => (typeof r.items === 'string' ? (JSON.parse(r.items) as Item[]) : r.items);

/** The service's strong ETag format for version 2 JSON, from the revision. */
export const etagOf = (r: Pick<Row, 'id' | 'revision'>) => `"${r.id}-${r.revision}-v2j"`;

/** If-Match against the current tag: `*`, or one of a comma-separated list of strong tags. */
export function ifMatchPasses(header: string, current: string): boolean {
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim() === current);
}

/** The fields after a merge patch of the writable members (RFC 7396, top level), or null if it changes nothing. */
export function mergePatch(r: Row, patch: Record<string, unknown>): Fields | null {
  const items = itemsOf(r);
  const next: Fields = { items, currency: r.currency, discount_code: r.discount_code, discount_percent: r.discount_percent, note: r.note };
  if ('items' in patch && Array.isArray(patch.items)) next.items = patch.items as Item[];
  if (typeof patch.currency === 'string') next.currency = patch.currency;
  if ('note' in patch) next.note = typeof patch.note === 'string' ? patch.note : null;
  if ('discount' in patch) {
    const d = patch.discount as { code?: unknown; percent?: unknown } | null;
    next.discount_code = d && typeof d.code === 'string' ? d.code : null;
    next.discount_percent = d && typeof d.percent === 'number' ? d.percent : null;
  }
  const same =
    next.note === r.note &&
    next.currency === r.currency &&
    next.discount_code === r.discount_code &&
    next.discount_percent === r.discount_percent &&
    (next.items === items || JSON.stringify(next.items) === JSON.stringify(items));
  return same ? null : next;
}

/** The fields of a create body, or null when it is not one (items an array of items, currency a string). */
export function createBody(body: unknown): Fields | null {
  if (typeof body !== 'object' || body === null) return null;
  const b = body as Record<string, unknown>;
  if (b.items !== undefined && !Array.isArray(b.items)) return null;
  if (b.currency !== undefined && typeof b.currency !== 'string') return null;
  const d = b.discount as { code?: unknown; percent?: unknown } | null | undefined;
  return {
    items: (b.items as Item[] | undefined) ?? [],
    currency: b.currency ?? 'EUR',
    discount_code: d && typeof d.code === 'string' ? d.code : null,
    discount_percent: d && typeof d.percent === 'number' ? d.percent : null,
    note: typeof b.note === 'string' ? b.note : null,
  };
}

/** The order as JSON, the same members as the service's version 2 representation. */
export function representation(r: Row) {
  const items = itemsOf(r);
  const gross = items.reduce((s, i) => s + i.quantity * i.unit_price_cents, 0);
  const percent = r.discount_percent ?? 0;
  const rest = gross % 100; // the total rounded half up, in integers (as the service computes it)
  const self = `/orders/${r.id}`;
  return {
    id: r.id,
    status: r.status,
    items,
    total_cents: ((gross - rest) / 100) * (100 - percent) + Math.floor((rest * (100 - percent) + 50) / 100),
    currency: r.currency,
    discount: r.discount_code ? { code: r.discount_code, percent } : null,
    note: r.note,
    created_at: r.created_at,
    updated_at: r.updated_at,
    _links: { self: { href: self }, ...(r.status === 'pending' || r.status === 'paid' ? { cancel: { href: `${self}/cancel` } } : {}) },
  };
}

/** The opaque keyset cursor, in the service's format (base64url of `c1:<last id>`). */
export const encodeCursor = (afterId: number) => Buffer.from(`c1:${afterId}`, 'utf8').toString('base64url');
export function decodeCursor(cursor: string): number | null {
  const m = /^c1:(0|[1-9][0-9]{0,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : null;
}

/** `limit` (1-100, default 20) and `page` of GET /orders, or null when either is not valid. */
export function listQuery(query: { limit?: unknown; page?: unknown }): { after: number; limit: number; page?: string; limitGiven: boolean } | null {
  let limit = 20;
  const limitGiven = typeof query.limit === 'string';
  if (limitGiven) {
    if (!/^[1-9][0-9]{0,2}$/.test(query.limit as string) || Number(query.limit) > 100) return null;
    limit = Number(query.limit);
  }
  let after = 0;
  const page = typeof query.page === 'string' ? query.page : undefined;
  if (page !== undefined) {
    const decoded = decodeCursor(page);
    if (decoded === null) return null;
    after = decoded;
  }
  return { after, limit, page, limitGiven };
}

/** The list body: the page's orders and `_links` (self as asked, next when there is more), as the service builds them. */
export function listBody(q: NonNullable<ReturnType<typeof listQuery>>, page: Page) {
  const params = new URLSearchParams({ ...(q.page ? { page: q.page } : {}), ...(q.limitGiven ? { limit: String(q.limit) } : {}) }).toString();
  const links: { self: { href: string }; next?: { href: string } } = { self: { href: params ? `/orders?${params}` : '/orders' } };
  const last = page.rows[page.rows.length - 1];
  if (page.hasMore && last) links.next = { href: `/orders?${new URLSearchParams({ page: encodeCursor(last.id), limit: String(q.limit) })}` };
  return { orders: page.rows.map(representation), _links: links };
}

/** The bound columns on SQLite: items as JSON text. */
type Stored = Omit<Fields, 'items'> & { items: string };

/** The peer's SQLite store: its own file in DATA_DIR, WAL, synchronous=NORMAL (the service's default), prepared statements. */
export function openPeerStore(dir = process.env.DATA_DIR ?? '.'): PeerStore {
  const db = new Database(join(dir, 'peer.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.exec(`
    -- The service's integrity rules: orders and tokens belong to an existing account (checked on every insert).
    CREATE TABLE IF NOT EXISTS accounts (id INTEGER PRIMARY KEY);
    INSERT OR IGNORE INTO accounts (id) VALUES (1), (2);
    CREATE TABLE IF NOT EXISTS tokens (hash TEXT PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id));
    CREATE TABLE IF NOT EXISTS orders (
      id INTEGER PRIMARY KEY AUTOINCREMENT, account_id INTEGER NOT NULL REFERENCES accounts(id), revision INTEGER NOT NULL, status TEXT NOT NULL,
      items TEXT NOT NULL, currency TEXT NOT NULL, discount_code TEXT, discount_percent INTEGER, note TEXT,
      created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS orders_account_id ON orders(account_id, id);
    CREATE TABLE IF NOT EXISTS order_events (
      order_id INTEGER NOT NULL REFERENCES orders(id), seq INTEGER NOT NULL, account_id INTEGER NOT NULL,
      type TEXT NOT NULL, payload TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (order_id, seq)) WITHOUT ROWID;
  `);
  db.prepare('INSERT OR IGNORE INTO tokens (hash, account_id) VALUES (?, 1)').run(hashToken(PEER_TOKEN));

  const insert = db.prepare<[Stored & { account_id: number; status: string; now: string }], Row>(
    `INSERT INTO orders (account_id, revision, status, items, currency, discount_code, discount_percent, note, created_at, updated_at)
     VALUES (@account_id, 1, @status, @items, @currency, @discount_code, @discount_percent, @note, @now, @now) RETURNING *`,
  );
  const insertEvent = db.prepare<[number, number, number, string, string, string]>('INSERT INTO order_events (order_id, seq, account_id, type, payload, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const createTx = db.transaction((account: number, status: string, f: Fields): Row => {
    const now = new Date().toISOString();
    const row = insert.get({ ...f, account_id: account, status, items: JSON.stringify(f.items), now })!;
    insertEvent.run(row.id, 1, account, 'order.created', JSON.stringify(row), now);
    return row;
  });
  if (!db.prepare('SELECT 1 FROM orders LIMIT 1').get()) for (const o of SEED_ORDERS) createTx.immediate(o.account, o.status, o.fields);

  const tokenStmt = db.prepare<[string], { account_id: number }>('SELECT account_id FROM tokens WHERE hash = ?');
  const select = db.prepare<[number, number], Row>('SELECT * FROM orders WHERE id = ? AND account_id = ?');
  const listStmt = db.prepare<[number, number, number], Row>('SELECT * FROM orders WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?');
  const update = db.prepare<[Stored & { now: string; id: number; revision: number }], Row>(
    `UPDATE orders SET revision = revision + 1, items = @items, currency = @currency, discount_code = @discount_code,
       discount_percent = @discount_percent, note = @note, updated_at = @now
     WHERE id = @id AND revision = @revision RETURNING *`,
  );
  const patchTx = db.transaction((id: number, account: number, ifMatch: string | undefined, patch: Record<string, unknown>): PatchResult => {
    const row = select.get(id, account);
    if (!row) return { status: 404 };
    if (ifMatch === undefined) return { status: 428 };
    if (!ifMatchPasses(ifMatch, etagOf(row))) return { status: 412 };
    const next = mergePatch(row, patch);
    if (next === null) return { status: 200, row };
    const now = new Date().toISOString();
    const updated = update.get({ ...next, items: JSON.stringify(next.items), now, id, revision: row.revision });
    if (!updated) throw new Error(`order ${id}: revision moved inside a write transaction`);
    insertEvent.run(id, updated.revision, account, 'order.updated', JSON.stringify(updated), now);
    return { status: 200, row: updated };
  });
  const cache = new Map<string, number>();

  return {
    account(authorization) {
      if (!authorization?.startsWith('Bearer ')) return undefined;
      // Cached by the token as sent, as the service's auth cache is: the hash only on a miss.
      const token = authorization.slice(7);
      let id = cache.get(token);
      if (id === undefined) {
        id = tokenStmt.get(hashToken(token))?.account_id;
        if (id !== undefined) cache.set(token, id);
      }
      return id;
    },
    get: (id, account) => select.get(id, account),
    list(account, after, limit) {
      const rows = listStmt.all(account, after, limit + 1);
      return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
    },
    create: (account, fields) => createTx.immediate(account, 'pending', fields),
    patch: (id, account, ifMatch, patch) => patchTx.immediate(id, account, ifMatch, patch),
  };
}

export function listen(server: { listen: (port: number, host: string, cb: () => void) => unknown }, port: number, host: string): void {
  server.listen(port, host, () => process.stdout.write(`listening on http://${host}:${port}\n`));
}
