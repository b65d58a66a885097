/**
 * The Store port's behaviour, as one jest suite every adapter runs with its own
 * factory (centrifuge's habit: one test suite, many adapters). An adapter that passes
 * it can replace another without the service noticing.
 */
import type { OrderFields, Store } from './store';

const fields = (over: Partial<OrderFields> = {}): OrderFields => ({
  status: 'pending',
  items: [{ sku: 'A', quantity: 1, unit_price_cents: 100 }],
  currency: 'EUR',
  discount: null,
  note: null,
  ...over,
});

export function runStoreContract(name: string, newStore: () => Promise<Store>): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await newStore();
      await store.migrate();
    });
    afterEach(() => store.close());

    it('migrates idempotently and answers ping', async () => {
      await store.migrate();
      expect(await store.ping()).toBe(true);
    });

    it('creates accounts once and finds them by token hash', async () => {
      const a = await store.ensureAccount('alice');
      expect(await store.ensureAccount('alice')).toEqual(a);
      await store.addToken(a.id, 'f'.repeat(64));
      expect(await store.accountByTokenHash('f'.repeat(64))).toEqual(a);
      expect(await store.accountByTokenHash('0'.repeat(64))).toBeNull();
      await store.setPinnedVersion(a.id, 1);
      expect((await store.accountByTokenHash('f'.repeat(64)))!.pinnedVersion).toBe(1);
    });

    it('creates an order at revision 1 with its event seq 1, scoped to its account', async () => {
      const a = await store.ensureAccount('a');
      const b = await store.ensureAccount('b');
      const { order, event } = await store.createOrder(a.id, fields({ note: 'n' }));
      expect(order).toMatchObject({ accountId: a.id, revision: 1, status: 'pending', note: 'n' });
      expect(event).toMatchObject({ orderId: order.id, seq: 1, type: 'order.created' });
      expect(await store.getOrder(a.id, order.id)).toEqual(order);
      expect(await store.getOrder(b.id, order.id)).toBeNull();
      expect(await store.eventsAfter(order.id, 0, 10)).toEqual([event]);
    });

    it('applies a write with revision + 1 and a gap-free event, atomically', async () => {
      const a = await store.ensureAccount('a');
      const { order } = await store.createOrder(a.id, fields());
      for (let i = 0; i < 3; i++) {
        const r = await store.writeOrder(a.id, order.id, (cur) => ({ apply: true, fields: { ...cur, note: `n${cur.revision}` }, eventType: 'order.updated' }));
        expect(r.ok).toBe(true);
      }
      const events = await store.eventsAfter(order.id, 0, 100);
      expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect(events[3].order).toMatchObject({ revision: 4, note: 'n3' });
      expect(await store.getOrder(a.id, order.id)).toMatchObject({ revision: 4, note: 'n3' });
      expect(await store.eventsAfter(order.id, 2, 1)).toHaveLength(1);
    });

    it('changes nothing when the decision refuses, and hides other accounts\' orders', async () => {
      const a = await store.ensureAccount('a');
      const b = await store.ensureAccount('b');
      const { order } = await store.createOrder(a.id, fields());
      expect(await store.writeOrder(a.id, order.id, () => ({ apply: false, reason: 'nope' }))).toEqual({ ok: false, reason: 'nope' });
      const calls: unknown[] = [];
      expect(await store.writeOrder(b.id, order.id, (c) => (calls.push(c), { apply: false, reason: 'x' }))).toEqual({ ok: false, reason: 'not_found' });
      expect(calls).toEqual([]);
      expect((await store.getOrder(a.id, order.id))!.revision).toBe(1);
      expect(await store.eventsAfter(order.id, 0, 10)).toHaveLength(1);
    });

    it('applies exactly one of 20 concurrent writes deciding on the same revision', async () => {
      const a = await store.ensureAccount('a');
      const { order } = await store.createOrder(a.id, fields());
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.writeOrder(a.id, order.id, (cur) =>
            cur.revision === 1 ? { apply: true, fields: { ...cur, note: `w${i}` }, eventType: 'order.updated' } : { apply: false, reason: 'stale' },
          ),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(await store.eventsAfter(order.id, 0, 100)).toHaveLength(2);
    });

    it('pages by keyset: every order exactly once while orders are inserted', async () => {
      const a = await store.ensureAccount('a');
      const ids: number[] = [];
      for (let i = 0; i < 7; i++) ids.push((await store.createOrder(a.id, fields())).order.id);
      const seen: number[] = [];
      let after = 0;
      for (;;) {
        const page = await store.listOrders(a.id, after, 3);
        seen.push(...page.orders.map((o) => o.id));
        ids.push((await store.createOrder(a.id, fields())).order.id);
        if (!page.hasMore) break;
        after = page.orders[page.orders.length - 1].id;
      }
      expect(seen).toEqual(ids.slice(0, seen.length));
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.length).toBeGreaterThanOrEqual(7);
    });

    it('loads the demo data once, even when an account exists first, and batches graph reads', async () => {
      await store.ensureAccount('demo');
      expect(await store.seedDemo()).toBe(true);
      expect(await store.seedDemo()).toBe(false);
      const users = await store.usersByIds(['u1', 'nope', 'u2']);
      expect(users.map((u) => u?.id ?? null)).toEqual(['u1', null, 'u2']);
      const friends = await store.friendsOf(['u1', 'nope', 'u3'], 2);
      expect(friends.map((f) => f.length)).toEqual([2, 0, 2]);
      const posts = await store.postsOf(['u1', 'u2'], 10);
      expect(posts[0].every((p) => p.authorId === 'u1')).toBe(true);
      expect(posts[1].length).toBeGreaterThan(0);
      const comments = await store.commentsOf([posts[0][0].id], 1);
      expect(comments[0]).toHaveLength(1);
      const demo = await store.ensureAccount('demo');
      expect((await store.userOfAccount(demo.id))!.id).toBe('u1');
      const orders = await store.ordersOfAccounts([demo.id, 999], 3);
      expect(orders.map((o) => o.length)).toEqual([3, 0]);
    });
  });
}
