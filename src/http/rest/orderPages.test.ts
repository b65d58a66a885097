import fc from 'fast-check';
import { SqliteStore } from '../../store/sqlite/SqliteStore';
import { DEMO_ORDERS } from '../../store/demo';
import { toV1, toV2 } from '../../orders';
import { orderPages, type Links, type PageQuery } from './orderPages';
import { serialized } from './representationCache';

async function storeWith(orders: number) {
  const store = new SqliteStore(':memory:');
  await store.migrate();
  const account = (await store.ensureAccount('a')).id;
  const other = (await store.ensureAccount('b')).id;
  for (let i = 0; i < orders; i++) {
    await store.createOrder(account, DEMO_ORDERS[i % DEMO_ORDERS.length].fields);
    await store.createOrder(other, DEMO_ORDERS[(i + 1) % DEMO_ORDERS.length].fields);
  }
  return { store, account };
}

const linksOf = (lastId: number | undefined, hasMore: boolean): Links => ({ self: { href: '/orders' }, ...(hasMore && lastId !== undefined ? { next: { href: `/orders?after=${lastId}` } } : {}) });
const query = (after: number, limit: number, base = '/orders'): PageQuery => ({ after, limit, base, links: linksOf });

describe('orderPages', () => {
  it('answers what the rows give, in each version, whether its orders were cached or not; its JSON text is JSON.stringify of it (generated)', async () => {
    const { store, account } = await storeWith(12);
    const pages = orderPages(store);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 15 }), fc.constantFrom('/orders', '/v1/orders', '/v2/orders'), fc.boolean(), async (after, limit, base, write) => {
        if (write) await store.writeOrder(account, 1 + 2 * (after % 12), (o) => ({ apply: true, fields: { ...o, note: `n${after}-${limit}` }, eventType: 'order.updated' }));
        const rows = await store.listOrders(account, after, limit);
        const links = linksOf(rows.orders.at(-1)?.id, rows.hasMore);
        const v2 = await pages.v2(account, query(after, limit, base));
        expect(v2).toEqual({ orders: rows.orders.map((o) => toV2(o, base)), _links: links });
        expect(serialized.get(v2)).toBe(JSON.stringify(v2));
        const v1 = await pages.v1(account, query(after, limit, base));
        expect(v1).toEqual({ orders: rows.orders.map((o) => toV1(o, base)), _links: links });
        expect(serialized.get(v1)).toBe(JSON.stringify(v1));
      }),
      { numRuns: 60 },
    );
  });

  it('reads only the revisions when every order of the page is cached, and the rows again once one has changed', async () => {
    const { store, account } = await storeWith(6);
    const listOrders = jest.spyOn(store, 'listOrders');
    const listRevisions = jest.spyOn(store, 'listRevisions');
    const pages = orderPages(store);
    await pages.v2(account, query(0, 5));
    expect(listOrders).toHaveBeenCalledTimes(1);
    const again = await pages.v2(account, query(0, 5));
    expect(listRevisions).toHaveBeenCalledTimes(2);
    expect(listOrders).toHaveBeenCalledTimes(1);
    const ids = again.orders.map((o) => o.id);
    await store.writeOrder(account, ids[2], (o) => ({ apply: true, fields: { ...o, note: 'changed' }, eventType: 'order.updated' }));
    const after = await pages.v2(account, query(0, 5));
    expect(listOrders).toHaveBeenCalledTimes(2);
    expect(after.orders[2].note).toBe('changed');
    expect(after.orders.map((o) => o.id)).toEqual(ids);
    // A page the cache holds in one version is read in full in the other.
    await pages.v1(account, query(0, 5));
    expect(listOrders).toHaveBeenCalledTimes(3);
  });
});
