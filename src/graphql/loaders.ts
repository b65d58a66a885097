/**
 * Per-request DataLoaders: every node of one level of a query is fetched by one store
 * call (N+1 -> one query per level). A list loader's key carries `first`, and a batch
 * is split by `first` because the store takes one size per call; nodes of one level
 * normally share it, so that is still one query per level.
 * Created per request: the cache must not outlive the request (another caller's view,
 * stale rows), and the batch window is the event-loop tick DataLoader uses.
 */
import DataLoader from 'dataloader';
import { MAX_BATCH, type Comment, type OrderRecord, type Post, type Store, type User } from '../store';

interface ListKey<K> {
  id: K;
  first: number;
}

function listLoader<K extends string | number, V>(fetch: (ids: K[], first: number) => Promise<V[][]>): DataLoader<ListKey<K>, V[], string> {
  return new DataLoader<ListKey<K>, V[], string>(
    async (keys) => {
      const out = new Array<V[]>(keys.length);
      const byFirst = new Map<number, number[]>();
      keys.forEach((k, i) => byFirst.set(k.first, [...(byFirst.get(k.first) ?? []), i]));
      for (const [first, idxs] of byFirst) {
        const rows = await fetch(
          idxs.map((i) => keys[i].id),
          first,
        );
        idxs.forEach((keyIndex, j) => (out[keyIndex] = rows[j]));
      }
      return out;
    },
    // The adapters refuse bigger batches; DataLoader splits them for us.
    { cacheKeyFn: (k) => `${k.id}:${k.first}`, maxBatchSize: MAX_BATCH },
  );
}

export function createLoaders(store: Store) {
  return {
    user: new DataLoader<string, User | null>((ids) => store.usersByIds(ids), { maxBatchSize: MAX_BATCH }),
    friends: listLoader<string, User>((ids, first) => store.friendsOf(ids, first)),
    posts: listLoader<string, Post>((ids, first) => store.postsOf(ids, first)),
    comments: listLoader<string, Comment>((ids, first) => store.commentsOf(ids, first)),
    orders: listLoader<number, OrderRecord>((ids, first) => store.ordersOfAccounts(ids, first)),
  };
}
export type Loaders = ReturnType<typeof createLoaders>;
