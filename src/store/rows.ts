/**
 * What both adapters share below the ports: the batch and row limits, the rows of the
 * tables whose columns are the same on SQLite and PostgreSQL, their mapping to port
 * types, and the graph reads on top of each adapter's statements. Orders and events differ (JSON text vs
 * jsonb, discount columns), so each adapter keeps its own of those.
 */
import type { Account, Comment, OrderItem, OrderRecord, Orders, Post, SocialGraph, User } from './store';

/**
 * Upper bound on ids per batch call: one statement, bounded work. Above it a call
 * throws rather than truncating, because a truncated batch would answer "no friends"
 * or "no such user" for the ids it dropped (DataLoader's `maxBatchSize` keeps callers under it).
 */
export const MAX_BATCH = 1000;
/** Upper bound on rows per list read (`limit`, `first`): a larger request gets this many, which "at most" allows. */
export const MAX_ROWS = 1000;

export const clampRows = (n: number): number => (Number.isFinite(n) ? Math.max(0, Math.min(Math.floor(n), MAX_ROWS)) : MAX_ROWS);

export interface AccountRow {
  id: number;
  name: string;
  pinned_version: number | null;
}
export interface UserRow {
  id: string;
  name: string;
  account_id: number | null;
}
export interface PostRow {
  id: string;
  author_id: string;
  title: string;
}
export interface CommentRow {
  id: string;
  post_id: string;
  author_id: string;
  body: string;
}

export const toAccount = (r: AccountRow): Account => ({ id: r.id, name: r.name, pinnedVersion: r.pinned_version });
export const toUser = (r: UserRow): User => ({ id: r.id, name: r.name, accountId: r.account_id });
export const toPost = (r: PostRow): Post => ({ id: r.id, authorId: r.author_id, title: r.title });
export const toComment = (r: CommentRow): Comment => ({ id: r.id, postId: r.post_id, authorId: r.author_id, body: r.body });

/** Groups rows by a key into arrays aligned with `keys` (DataLoader's contract; duplicate keys get the same list). */
export function align<K, R>(keys: readonly K[], rows: R[], keyOf: (r: R) => K): R[][] {
  const by = new Map<K, R[]>();
  for (const r of rows) {
    const k = keyOf(r);
    const list = by.get(k);
    if (list) list.push(r);
    else by.set(k, [r]);
  }
  return keys.map((k) => by.get(k) ?? []);
}

/** An order row as both adapters read it: `items` is JSON text in SQLite, jsonb (already parsed) in PostgreSQL. */
export interface OrderRow<Items> {
  id: number;
  account_id: number;
  revision: number;
  status: string;
  items: Items;
  currency: string;
  discount_code: string | null;
  discount_percent: number | null;
  note: string | null;
  created_at: string;
  updated_at: string;
}

export function toOrder<Items>(r: OrderRow<Items>, items: (stored: Items) => OrderItem[]): OrderRecord {
  return {
    id: r.id,
    accountId: r.account_id,
    revision: r.revision,
    status: r.status,
    items: items(r.items),
    currency: r.currency,
    discount: r.discount_code === null ? null : { code: r.discount_code, percent: r.discount_percent ?? 0 },
    note: r.note,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/**
 * How an adapter runs each graph read: one statement per call, whatever the number of
 * ids (an adapter may pick a cheaper statement for one id; ids no row can have may be
 * answered without one).
 */
export interface GraphStatements<O> {
  usersByIds(ids: readonly string[]): Promise<UserRow[]>;
  friendsOf(userIds: readonly string[], first: number): Promise<(UserRow & { parent: string })[]>;
  postsOf(userIds: readonly string[], first: number): Promise<PostRow[]>;
  commentsOf(postIds: readonly string[], first: number): Promise<CommentRow[]>;
  ordersOfAccounts(accountIds: readonly number[], first: number, after: number): Promise<(O & { account_id: number })[]>;
  userOfAccount(accountId: number): Promise<UserRow | undefined>;
}

/**
 * The social graph's reads and `ordersOfAccounts`, once for both adapters, on top of
 * their statements (`graphStatements`): no ids answers without a query, and rows come
 * back aligned with the ids (DataLoader's contract) and mapped to port types.
 */
export abstract class GraphReads<O> implements SocialGraph, Pick<Orders, 'ordersOfAccounts'> {
  /** The adapter's statements behind every read below. */
  protected abstract readonly graphStatements: GraphStatements<O>;
  /** The adapter's order row mapping. */
  protected abstract orderRecord(row: O): OrderRecord;

  async usersByIds(ids: readonly string[]): Promise<(User | null)[]> {
    if (ids.length === 0) return [];
    const by = new Map((await this.graphStatements.usersByIds(ids)).map((r) => [r.id, toUser(r)]));
    return ids.map((id) => by.get(id) ?? null);
  }

  async friendsOf(userIds: readonly string[], first: number): Promise<User[][]> {
    if (userIds.length === 0) return [];
    return align(userIds, await this.graphStatements.friendsOf(userIds, first), (r) => r.parent).map((list) => list.map(toUser));
  }

  async postsOf(userIds: readonly string[], first: number): Promise<Post[][]> {
    if (userIds.length === 0) return [];
    return align(userIds, await this.graphStatements.postsOf(userIds, first), (r) => r.author_id).map((list) => list.map(toPost));
  }

  async commentsOf(postIds: readonly string[], first: number): Promise<Comment[][]> {
    if (postIds.length === 0) return [];
    return align(postIds, await this.graphStatements.commentsOf(postIds, first), (r) => r.post_id).map((list) => list.map(toComment));
  }

  async ordersOfAccounts(accountIds: readonly number[], first: number, after = 0): Promise<OrderRecord[][]> {
    if (accountIds.length === 0) return [];
    return align(accountIds, await this.graphStatements.ordersOfAccounts(accountIds, first, after), (r) => r.account_id).map((list) => list.map((row) => this.orderRecord(row)));
  }

  async userOfAccount(accountId: number): Promise<User | null> {
    const row = await this.graphStatements.userOfAccount(accountId);
    return row ? toUser(row) : null;
  }
}
