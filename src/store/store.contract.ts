/**
 * The Store port's behaviour, as one jest suite every adapter runs with its own
 * factory (centrifuge's habit: one test suite, many adapters). An adapter that passes
 * it can replace another without the service noticing. Excluded from the build
 * (tsconfig.build.json): it is test code that adapters' `*.test.ts` files import.
 */
import type { OrderFields, OrderRecord, Store, WriteDecision } from './store';

const fields = (over: Partial<OrderFields> = {}): OrderFields => ({
  status: 'pending',
  items: [{ sku: 'A', quantity: 1, unit_price_cents: 100 }],
  currency: 'EUR',
  discount: null,
  note: null,
  ...over,
});

/** A decision that sets the note, as a handler's merge patch would. */
const setNote =
  (note: string) =>
  (cur: OrderRecord): WriteDecision<never> => ({
    apply: true,
    fields: { status: cur.status, items: cur.items, currency: cur.currency, discount: cur.discount, note },
    eventType: 'order.updated',
  });

/** Every adapter counts the statements it runs, so the suite can check batch reads are one each. */
export type CountingStore = Store & { readonly queryCount: number };

export function runStoreContract(name: string, newStore: () => Promise<CountingStore>): void {
  describe(`Store contract: ${name}`, () => {
    let store: CountingStore;
    beforeEach(async () => {
      store = await newStore();
      await store.migrate();
    });
    afterEach(() => store.close());

    describe('schema and accounts', () => {
      it('migrates again without error or data loss, and answers ping', async () => {
        const a = await store.ensureAccount('alice');
        const { order } = await store.createOrder(a.id, fields());
        await store.migrate();
        await store.migrate();
        expect(await store.ping()).toBe(true);
        expect(await store.getOrder(a.id, order.id)).toEqual(order);
      });

      it('creates an account once: ensureAccount is idempotent and names are distinct', async () => {
        const a = await store.ensureAccount('alice');
        expect(a).toMatchObject({ name: 'alice', pinnedVersion: null });
        expect(await store.ensureAccount('alice')).toEqual(a);
        const b = await store.ensureAccount('bob');
        expect(b.id).not.toBe(a.id);
      });

      it('finds a token by its selector with the stored verifier hash, and nothing for an unknown selector', async () => {
        const a = await store.ensureAccount('alice');
        await store.addToken(a.id, 'selector-0000001', 'f'.repeat(64));
        await store.addToken(a.id, 'selector-0000003', 'e'.repeat(64));
        expect(await store.tokenBySelector('selector-0000001')).toEqual({ account: a, verifierHash: 'f'.repeat(64) });
        expect(await store.tokenBySelector('selector-0000003')).toEqual({ account: a, verifierHash: 'e'.repeat(64) });
        expect(await store.tokenBySelector('selector-0000002')).toBeNull();
      });

      it('lists an account’s tokens (selector and creation time, oldest first) and revokes one', async () => {
        const a = await store.ensureAccount('alice');
        const b = await store.ensureAccount('bob');
        await store.addToken(a.id, 'selector-0000001', 'f'.repeat(64));
        await store.addToken(a.id, 'selector-0000002', 'e'.repeat(64));
        await store.addToken(b.id, 'selector-0000003', 'd'.repeat(64));
        const listed = await store.listTokens(a.id);
        expect(listed.map((t) => t.selector)).toEqual(['selector-0000001', 'selector-0000002']);
        for (const t of listed) expect(Object.keys(t).sort()).toEqual(['createdAt', 'selector']);
        for (const t of listed) expect(new Date(t.createdAt).toISOString()).toBe(t.createdAt);
        // Another account's selector is not this account's to revoke.
        expect(await store.revokeToken(a.id, 'selector-0000003')).toBe(false);
        expect(await store.revokeToken(a.id, 'selector-0000001')).toBe(true);
        expect(await store.revokeToken(a.id, 'selector-0000001')).toBe(false);
        expect(await store.tokenBySelector('selector-0000001')).toBeNull();
        expect((await store.listTokens(a.id)).map((t) => t.selector)).toEqual(['selector-0000002']);
        expect(await store.tokenBySelector('selector-0000003')).not.toBeNull();
      });

      it('round-trips the pinned version, back to null too', async () => {
        const a = await store.ensureAccount('alice');
        await store.addToken(a.id, 'selector-0000001', 'f'.repeat(64));
        await store.setPinnedVersion(a.id, 1);
        expect((await store.ensureAccount('alice')).pinnedVersion).toBe(1);
        expect((await store.tokenBySelector('selector-0000001'))!.account.pinnedVersion).toBe(1);
        await store.setPinnedVersion(a.id, null);
        expect((await store.ensureAccount('alice')).pinnedVersion).toBeNull();
      });
    });

    describe('orders', () => {
      it('creates an order at revision 1 with its order.created event seq 1', async () => {
        const a = await store.ensureAccount('a');
        const f = fields({ note: 'n', discount: { code: 'WELCOME10', percent: 10 }, items: [{ sku: 'B', quantity: 2, unit_price_cents: 250 }] });
        const { order, event } = await store.createOrder(a.id, f);
        expect(order).toMatchObject({ ...f, accountId: a.id, revision: 1 });
        expect(order.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        expect(order.updatedAt).toBe(order.createdAt);
        expect(event).toEqual({ orderId: order.id, accountId: a.id, seq: 1, type: 'order.created', order, createdAt: order.createdAt });
        expect(await store.getOrder(a.id, order.id)).toEqual(order);
        expect(await store.eventsAfter(order.id, 0, 10)).toEqual([event]);
      });

      it('reads the current revision alone, scoped by account', async () => {
        const a = await store.ensureAccount('a');
        const b = await store.ensureAccount('b');
        const { order } = await store.createOrder(a.id, fields());
        expect(await store.orderRevision(a.id, order.id)).toBe(1);
        await store.writeOrder(a.id, order.id, setNote('changed'));
        expect(await store.orderRevision(a.id, order.id)).toBe(2);
        expect(await store.orderRevision(b.id, order.id)).toBeNull();
        expect(await store.orderRevision(a.id, order.id + 1000)).toBeNull();
        // The synchronous form, where an adapter has one, answers the same.
        if (store.orderRevisionNow) {
          expect(store.orderRevisionNow(a.id, order.id)).toBe(2);
          expect(store.orderRevisionNow(b.id, order.id)).toBeNull();
          expect(store.orderRevisionNow(a.id, order.id + 1000)).toBeNull();
        }
      });

      it("scopes getOrder by account: another account's order reads as missing", async () => {
        const a = await store.ensureAccount('a');
        const b = await store.ensureAccount('b');
        const { order } = await store.createOrder(a.id, fields());
        expect(await store.getOrder(b.id, order.id)).toBeNull();
        expect(await store.getOrder(a.id, order.id + 1000)).toBeNull();
      });

      it('applies writes with revision + 1 and a gap-free event whose seq equals the revision', async () => {
        const a = await store.ensureAccount('a');
        const { order } = await store.createOrder(a.id, fields());
        for (let i = 0; i < 3; i++) {
          const r = await store.writeOrder(a.id, order.id, (cur) => setNote(`n${cur.revision}`)(cur));
          if (!r.ok) throw new Error(`write ${i} refused`);
          expect(r.order).toMatchObject({ id: order.id, revision: 2 + i, note: `n${1 + i}`, createdAt: order.createdAt });
          expect(r.event).toMatchObject({ orderId: order.id, accountId: a.id, seq: r.order.revision, type: 'order.updated' });
          expect(r.event.order).toEqual(r.order);
          expect(await store.getOrder(a.id, order.id)).toEqual(r.order);
        }
        const events = await store.eventsAfter(order.id, 0, 100);
        expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
        expect(events.map((e) => e.order.revision)).toEqual([1, 2, 3, 4]);
        expect(events[3].order).toMatchObject({ revision: 4, note: 'n3' });
      });

      it('stores only the port fields of a decision, whatever else the object carries', async () => {
        const a = await store.ensureAccount('a');
        const { order } = await store.createOrder(a.id, fields());
        const r = await store.writeOrder(a.id, order.id, (cur) => ({
          apply: true,
          fields: { ...cur, revision: 99, id: 12345, extra: 'x', note: 'wide' } as OrderFields,
          eventType: 'order.updated',
        }));
        if (!r.ok) throw new Error('refused');
        expect(r.order).toMatchObject({ id: order.id, revision: 2, note: 'wide' });
        expect(r.order).not.toHaveProperty('extra');
        expect((await store.eventsAfter(order.id, 1, 10))[0].order).toEqual(r.order);
      });

      it('changes nothing and writes no event when the decision refuses', async () => {
        const a = await store.ensureAccount('a');
        const { order } = await store.createOrder(a.id, fields());
        expect(await store.writeOrder(a.id, order.id, () => ({ apply: false, reason: 'nope' }))).toEqual({ ok: false, reason: 'nope' });
        expect(await store.getOrder(a.id, order.id)).toEqual(order);
        expect(await store.eventsAfter(order.id, 0, 10)).toHaveLength(1);
      });

      it("answers not_found without calling decide for another account's order or a missing one", async () => {
        const a = await store.ensureAccount('a');
        const b = await store.ensureAccount('b');
        const { order } = await store.createOrder(a.id, fields());
        const calls: unknown[] = [];
        const decide = (c: OrderRecord): WriteDecision<string> => (calls.push(c), setNote('stolen')(c));
        expect(await store.writeOrder(b.id, order.id, decide)).toEqual({ ok: false, reason: 'not_found' });
        expect(await store.writeOrder(a.id, order.id + 1000, decide)).toEqual({ ok: false, reason: 'not_found' });
        expect(calls).toEqual([]);
        expect(await store.getOrder(a.id, order.id)).toEqual(order);
        expect(await store.eventsAfter(order.id, 0, 10)).toHaveLength(1);
      });

      it('rolls back and rejects when decide throws', async () => {
        const a = await store.ensureAccount('a');
        const { order } = await store.createOrder(a.id, fields());
        await expect(
          store.writeOrder(a.id, order.id, () => {
            throw new Error('boom');
          }),
        ).rejects.toThrow('boom');
        expect(await store.getOrder(a.id, order.id)).toEqual(order);
        expect(await store.writeOrder(a.id, order.id, setNote('after'))).toMatchObject({ ok: true });
      });

      it('applies exactly one of 20 concurrent writes deciding on the same revision', async () => {
        const a = await store.ensureAccount('a');
        const { order } = await store.createOrder(a.id, fields());
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.writeOrder(a.id, order.id, (cur) => (cur.revision === 1 ? setNote(`w${i}`)(cur) : { apply: false, reason: 'stale' as const })),
          ),
        );
        const applied = results.filter((r) => r.ok);
        expect(applied).toHaveLength(1);
        expect(results.filter((r) => !r.ok && r.reason === 'stale')).toHaveLength(19);
        const events = await store.eventsAfter(order.id, 0, 100);
        expect(events.map((e) => e.seq)).toEqual([1, 2]);
        expect(await store.getOrder(a.id, order.id)).toMatchObject({ revision: 2, note: applied[0].ok ? applied[0].order.note : undefined });
      });
    });

    describe('listing and events', () => {
      it('pages by keyset: every order exactly once, in id order, while orders are inserted between pages', async () => {
        const a = await store.ensureAccount('a');
        const b = await store.ensureAccount('b');
        const ids: number[] = [];
        for (let i = 0; i < 7; i++) {
          ids.push((await store.createOrder(a.id, fields())).order.id);
          await store.createOrder(b.id, fields()); // interleaved: must never show up
        }
        const seen: number[] = [];
        let after = 0;
        for (let pages = 0; pages < 50; pages++) {
          const page = await store.listOrders(a.id, after, 3);
          expect(page.orders.length).toBeLessThanOrEqual(3);
          expect(page.orders.every((o) => o.accountId === a.id)).toBe(true);
          seen.push(...page.orders.map((o) => o.id));
          if (!page.hasMore) break;
          after = page.orders[page.orders.length - 1].id;
          ids.push((await store.createOrder(a.id, fields())).order.id);
        }
        // Orders inserted during paging have higher ids, so the walk reaches all of them.
        expect(seen).toEqual(ids);
      });

      it('reports hasMore false when a page ends exactly at the last order', async () => {
        const a = await store.ensureAccount('a');
        for (let i = 0; i < 4; i++) await store.createOrder(a.id, fields());
        const first = await store.listOrders(a.id, 0, 2);
        expect(first.hasMore).toBe(true);
        const second = await store.listOrders(a.id, first.orders[1].id, 2);
        expect(second.orders).toHaveLength(2);
        expect(second.hasMore).toBe(false);
        expect(await store.listOrders(a.id, second.orders[1].id, 2)).toEqual({ orders: [], hasMore: false });
      });

      it('returns events after a seq, ascending, at most limit', async () => {
        const a = await store.ensureAccount('a');
        const { order } = await store.createOrder(a.id, fields());
        for (let i = 0; i < 4; i++) await store.writeOrder(a.id, order.id, setNote(`n${i}`));
        expect((await store.eventsAfter(order.id, 1, 2)).map((e) => e.seq)).toEqual([2, 3]);
        expect((await store.eventsAfter(order.id, 3, 100)).map((e) => e.seq)).toEqual([4, 5]);
        expect(await store.eventsAfter(order.id, 5, 100)).toEqual([]);
        expect(await store.eventsAfter(order.id + 1000, 0, 100)).toEqual([]);
      });
    });

    describe('demo data and graph reads', () => {
      it('loads the demo data once, even when an account exists first', async () => {
        await store.ensureAccount('demo');
        expect(await store.seedDemo()).toBe(true);
        expect(await store.seedDemo()).toBe(false);
        const demo = await store.ensureAccount('demo');
        const acme = await store.ensureAccount('acme');
        expect((await store.listOrders(demo.id, 0, 100)).orders).toHaveLength(5);
        expect((await store.listOrders(acme.id, 0, 100)).orders).toHaveLength(2);
        const all = [...(await store.listOrders(demo.id, 0, 100)).orders, ...(await store.listOrders(acme.id, 0, 100)).orders];
        expect(new Set(all.map((o) => o.status))).toEqual(new Set(['pending', 'paid', 'shipped', 'delivered', 'cancelled']));
        expect(all.some((o) => o.discount?.code === 'WELCOME10' && o.discount.percent === 10)).toBe(true);
        for (const o of all) expect(await store.eventsAfter(o.id, 0, 10)).toMatchObject([{ seq: 1, type: 'order.created', order: o }]);
        expect((await store.userOfAccount(demo.id))!.id).toBe('u1');
        expect((await store.userOfAccount(acme.id))!.id).toBe('u2');
        expect(await store.userOfAccount(acme.id + 1000)).toBeNull();
      });

      it('reads users in a batch aligned with the input, null where missing', async () => {
        await store.seedDemo();
        const users = await store.usersByIds(['u3', 'nope', 'u1', 'u3']);
        expect(users.map((u) => u?.id ?? null)).toEqual(['u3', null, 'u1', 'u3']);
        expect(users[2]!.accountId).not.toBeNull();
        expect(await store.usersByIds([])).toEqual([]);
        const twelve = await store.usersByIds(Array.from({ length: 12 }, (_, i) => `u${i + 1}`));
        expect(twelve.every((u) => u !== null && u.name.length > 0)).toBe(true);
      });

      it('reads friends per user, aligned, at most first each, in a stable order, symmetric', async () => {
        await store.seedDemo();
        const ids = Array.from({ length: 12 }, (_, i) => `u${i + 1}`);
        const all = await store.friendsOf(ids, 100);
        all.forEach((list, i) => {
          expect(list.length).toBeGreaterThanOrEqual(3);
          expect(list.length).toBeLessThanOrEqual(5);
          for (const f of list) expect(all[ids.indexOf(f.id)].map((x) => x.id)).toContain(ids[i]);
        });
        const two = await store.friendsOf(['u1', 'nope', 'u3', 'u1'], 2);
        expect(two.map((f) => f.length)).toEqual([2, 0, 2, 2]);
        expect(two[0]).toEqual(all[0].slice(0, 2)); // the first 2 of the same stable order
        expect(two[3]).toEqual(two[0]); // a repeated id gets the same answer
      });

      it('reads posts per author and comments per post, aligned, at most first each', async () => {
        await store.seedDemo();
        const posts = await store.postsOf(['u1', 'u2', 'nope'], 10);
        expect(posts[0].length).toBeGreaterThanOrEqual(2);
        expect(posts[0].length).toBeLessThanOrEqual(4);
        expect(posts[0].every((p) => p.authorId === 'u1')).toBe(true);
        expect(posts[1].every((p) => p.authorId === 'u2')).toBe(true);
        expect(posts[2]).toEqual([]);
        expect((await store.postsOf(['u1', 'u2'], 1)).map((p) => p.length)).toEqual([1, 1]);

        const postIds = [...posts[0], ...posts[1]].map((p) => p.id);
        const comments = await store.commentsOf(postIds, 10);
        comments.forEach((list, i) => {
          expect(list.length).toBeGreaterThanOrEqual(2);
          expect(list.length).toBeLessThanOrEqual(3);
          expect(list.every((c) => c.postId === postIds[i])).toBe(true);
        });
        const one = await store.commentsOf([postIds[0], 'nope'], 1);
        expect(one.map((l) => l.length)).toEqual([1, 0]);
        expect(one[0][0]).toEqual(comments[0][0]);
      });

      it('reads orders per account by ascending id, at most first each', async () => {
        await store.seedDemo();
        const demo = await store.ensureAccount('demo');
        const acme = await store.ensureAccount('acme');
        const orders = await store.ordersOfAccounts([demo.id, 999_999, acme.id], 3);
        expect(orders.map((o) => o.length)).toEqual([3, 0, 2]);
        expect(orders[0]).toEqual((await store.listOrders(demo.id, 0, 3)).orders);
        expect(orders[2].every((o) => o.accountId === acme.id)).toBe(true);
      });
    });

    it('reads every batch in one query (the friends of ten users, their posts, comments, orders)', async () => {
      await store.seedDemo();
      const ten = ['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8', 'u9', 'u10'];
      const count = async (read: () => Promise<unknown>) => {
        const before = store.queryCount;
        await read();
        return store.queryCount - before;
      };
      expect(await count(() => store.friendsOf(ten, 5))).toBe(1);
      expect(await count(() => store.usersByIds(ten))).toBe(1);
      expect(await count(() => store.postsOf(ten, 5))).toBe(1);
      expect(await count(() => store.commentsOf(['p1-1', 'p1-2', 'p2-1', 'p3-1'], 5))).toBe(1);
      expect(await count(() => store.ordersOfAccounts([1, 2, 3], 5))).toBe(1);
    });
  });
}
