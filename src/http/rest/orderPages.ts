/**
 * Pages of the order list from cached representations. A revision names one immutable
 * state (as for the order read), so the page's ids and revisions (`listRevisions`: one
 * index walk, two columns) are enough when every order of the page is cached in the
 * version asked: the page is then its cached objects and JSON texts, without reading,
 * decoding, mapping or serializing any row. One order missing reads the page in full
 * (`listOrders`) and caches each of its orders; that read's page is the answer, so a write
 * landing between the two reads is answered as it stands after it.
 *
 * Measured (BENCHMARKS.md, "REST against hand-written peers"): the full page of five
 * orders is about a third of the list's server CPU in its statement alone; the revisions'
 * statement costs a third of that.
 */
import { toV1, toV2, VERSIONS, type OrderV1, type OrderV2 } from '../../orders';
import type { OrderRecord, Orders } from '../../store';
import { REPRESENTATION_CACHE_ENTRIES, REPRESENTATION_CACHE_MAX_BYTES, RepresentationCache, serialized } from './representationCache';

/** One order's representation in one version: the object and its JSON text. */
interface Cached<T> {
  body: T;
  json: string;
}

export type Links = { self: { href: string }; next?: { href: string } };

/** A page body, whose JSON text the writer finds in `serialized`. */
export interface Page<T> {
  orders: T[];
  _links: Links;
}

export interface PageQuery {
  after: number;
  limit: number;
  /** The collection path the client used (`/orders`, `/v1/orders`): links stay in it. */
  base: string;
  /** The page's `_links`, given the last order's id and whether more follow. */
  links: (lastId: number | undefined, hasMore: boolean) => Links;
}

export interface OrderPages {
  v1(accountId: number, q: PageQuery): Promise<Page<OrderV1>>;
  v2(accountId: number, q: PageQuery): Promise<Page<OrderV2>>;
}

// Weighed roughly: the JSON text (2 bytes per UTF-16 unit), the object about as much again, and the key.
const weigh = (e: Cached<unknown>, key: string) => 256 + 4 * e.json.length + 2 * key.length;

export function orderPages(store: Pick<Orders, 'listOrders' | 'listRevisions'>): OrderPages {
  function pages<T>(map: (order: OrderRecord, base: string) => T) {
    // The versions share one bound: as many entries and bytes in all as the order read's cache.
    const cache = new RepresentationCache<Cached<T>>(Math.ceil(REPRESENTATION_CACHE_ENTRIES / VERSIONS.length), weigh, REPRESENTATION_CACHE_MAX_BYTES / VERSIONS.length);
    const keyOf = (id: number, revision: number, base: string) => `${id}:${revision}:${base}`;

    return async (accountId: number, q: PageQuery): Promise<Page<T>> => {
      const revisions = await store.listRevisions(accountId, q.after, q.limit);
      let page: { orders: { id: number }[]; hasMore: boolean } = revisions;
      let items: Cached<T>[] = [];
      for (const r of revisions.orders) {
        const hit = cache.get(keyOf(r.id, r.revision, q.base));
        if (hit === undefined) break;
        items.push(hit);
      }
      if (items.length < revisions.orders.length) {
        const rows = await store.listOrders(accountId, q.after, q.limit);
        items = rows.orders.map((order) => {
          const body = map(order, q.base);
          const entry = { body, json: JSON.stringify(body) };
          cache.set(keyOf(order.id, order.revision, q.base), entry);
          return entry;
        });
        page = rows;
      }
      const links = q.links(page.orders.at(-1)?.id, page.hasMore);
      const body = { orders: items.map((i) => i.body), _links: links };
      // What JSON.stringify(body) gives, from the orders' texts: members in the same order.
      serialized.set(body, `{"orders":[${items.map((i) => i.json).join(',')}],"_links":${JSON.stringify(links)}}`);
      return body;
    };
  }

  return { v1: pages(toV1), v2: pages(toV2) };
}
