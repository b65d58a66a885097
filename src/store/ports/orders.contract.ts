/**
 * The orders port's behaviour, one suite every adapter runs with its own factory: an
 * adapter that passes it can replace another without the service noticing.
 */
import fc from 'fast-check';
import type { OrderFields, OrderRecord, Orders, WriteDecision } from './orders';
import { fields, setNote, statementsOf, type Closable, type Counted, type MakesAccounts } from './fixtures.contract';
import { MAX_BATCH } from '../rows';

export type OrdersStore = Orders & MakesAccounts & Counted & Closable;
/** A migrated, empty store; the suite closes it. */
export type OrdersFactory = () => Promise<OrdersStore>;

export function runOrdersContract(name: string, newStore: OrdersFactory): void {
  describe(`Orders contract: ${name}`, () => {
    let store: OrdersStore;
    beforeEach(async () => {
      store = await newStore();
    });
    afterEach(() => store.close());

    describe('writes', () => {
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

      it('reads the newest seq of many orders in one call, whoever owns them; missing ones are absent', async () => {
        const a = await store.ensureAccount('a');
        const b = await store.ensureAccount('b');
        const { order: one } = await store.createOrder(a.id, fields());
        const { order: two } = await store.createOrder(b.id, fields());
        await store.writeOrder(b.id, two.id, setNote('changed'));
        expect(await store.latestSeqs([one.id, two.id, two.id + 1000])).toEqual(
          new Map([
            [one.id, 1],
            [two.id, 2],
          ]),
        );
        expect(await store.latestSeqs([])).toEqual(new Map());
        await expect(store.latestSeqs(Array.from({ length: MAX_BATCH + 1 }, (_, i) => i + 1))).rejects.toThrow(RangeError);
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
      });

      it('answers revision reads asked for together each with its own order, account and revision (generated)', async () => {
        const a = await store.ensureAccount('a');
        const b = await store.ensureAccount('b');
        const mine = [(await store.createOrder(a.id, fields())).order.id, (await store.createOrder(a.id, fields())).order.id];
        const theirs = (await store.createOrder(b.id, fields())).order.id;
        await store.writeOrder(a.id, mine[1], setNote('changed'));
        const truth = (account: number, id: number) => (account === a.id ? (id === mine[0] ? 1 : id === mine[1] ? 2 : null) : id === theirs ? 1 : null);
        await fc.assert(
          fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(a.id, b.id), fc.constantFrom(...mine, theirs, theirs + 1000, -1)), { minLength: 1, maxLength: 12 }), async (reads) => {
            const got = await Promise.all(reads.map(([account, id]) => store.orderRevision(account, id)));
            expect(got).toEqual(reads.map(([account, id]) => truth(account, id)));
          }),
          { numRuns: 25 },
        );
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
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.writeOrder(a.id, order.id, (cur) => (cur.revision === 1 ? setNote(`w${i}`)(cur) : { apply: false, reason: 'stale' as const }))));
        const applied = results.filter((r) => r.ok);
        expect(applied).toHaveLength(1);
        expect(results.filter((r) => !r.ok && r.reason === 'stale')).toHaveLength(19);
        const events = await store.eventsAfter(order.id, 0, 100);
        expect(events.map((e) => e.seq)).toEqual([1, 2]);
        expect(await store.getOrder(a.id, order.id)).toMatchObject({ revision: 2, note: applied[0].ok ? applied[0].order.note : undefined });
      });

      it('applies every one of 20 concurrent writes that accept any revision, each on its own revision', async () => {
        const a = await store.ensureAccount('a');
        const { order } = await store.createOrder(a.id, fields());
        const seen: number[][] = Array.from({ length: 20 }, () => []);
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.writeOrder(a.id, order.id, (cur) => {
              seen[i].push(cur.revision);
              return setNote(`w${i}@${cur.revision}`)(cur);
            }),
          ),
        );
        const applied = results.map((r) => (r.ok ? r.order : null));
        // Each write applied once, on the revision its last decision saw, and no two on the same one.
        expect(applied.map((o, i) => o?.note === `w${i}@${seen[i].at(-1)}` && o.revision === seen[i].at(-1)! + 1)).toEqual(Array(20).fill(true));
        expect(applied.map((o) => o?.revision).sort((x, y) => x! - y!)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
        const events = await store.eventsAfter(order.id, 0, 100);
        expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
        for (const r of results) if (r.ok) expect(events[r.order.revision - 1].order).toEqual(r.order);
        expect(await store.getOrder(a.id, order.id)).toEqual(events[20].order);
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

      it('answers as ids and revisions the page listOrders answers (listRevisions)', async () => {
        const a = await store.ensureAccount('a');
        const b = await store.ensureAccount('b');
        const ids: number[] = [];
        for (let i = 0; i < 5; i++) {
          ids.push((await store.createOrder(a.id, fields())).order.id);
          await store.createOrder(b.id, fields());
        }
        await store.writeOrder(a.id, ids[1], setNote('second'));
        await store.writeOrder(a.id, ids[1], setNote('third'));
        await store.writeOrder(a.id, ids[3], setNote('second'));
        for (const [after, limit] of [
          [0, 2],
          [0, 10],
          [ids[0], 2],
          [ids[2], 2],
          [ids[4], 3],
        ]) {
          const page = await store.listOrders(a.id, after, limit);
          expect(await store.listRevisions(a.id, after, limit)).toEqual({ orders: page.orders.map((o) => ({ id: o.id, revision: o.revision })), hasMore: page.hasMore });
        }
        expect((await store.listRevisions(a.id, 0, 10)).orders.map((o) => o.revision)).toEqual([1, 3, 1, 2, 1]);
        expect(await store.listRevisions(b.id, ids[4] + 1000, 10)).toEqual({ orders: [], hasMore: false });
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

      it('reads orders per account by ascending id, at most first each, aligned with the ids, in one query', async () => {
        const a = await store.ensureAccount('a');
        const b = await store.ensureAccount('b');
        for (let i = 0; i < 4; i++) await store.createOrder(a.id, fields({ note: `a${i}` }));
        for (let i = 0; i < 2; i++) await store.createOrder(b.id, fields({ note: `b${i}` }));
        let orders: OrderRecord[][] = [];
        const statements = await statementsOf(store, async () => {
          orders = await store.ordersOfAccounts([a.id, 999_999, b.id, a.id], 3);
        });
        expect(statements).toBe(1);
        expect(orders.map((o) => o.length)).toEqual([3, 0, 2, 3]);
        expect(orders[0]).toEqual((await store.listOrders(a.id, 0, 3)).orders);
        expect(orders[2]).toEqual((await store.listOrders(b.id, 0, 3)).orders);
        expect(orders[3]).toEqual(orders[0]);
        expect(await statementsOf(store, () => store.ordersOfAccounts([], 3))).toBe(0);
        expect(await store.ordersOfAccounts([], 3)).toEqual([]);
      });

      it('reads the page after an order id: every order once, page by page, for one account and for a batch', async () => {
        const a = await store.ensureAccount('pa');
        const b = await store.ensureAccount('pb');
        for (let i = 0; i < 5; i++) await store.createOrder(a.id, fields({ note: `a${i}` }));
        for (let i = 0; i < 3; i++) await store.createOrder(b.id, fields({ note: `b${i}` }));
        const all = (await store.listOrders(a.id, 0, 100)).orders;
        for (const ids of [[a.id], [a.id, b.id]]) {
          const seen: number[] = [];
          let after = 0;
          for (;;) {
            const [page] = await store.ordersOfAccounts(ids, 2, after);
            if (page.length === 0) break;
            seen.push(...page.map((o) => o.id));
            after = page[page.length - 1].id;
          }
          expect(seen).toEqual(all.map((o) => o.id));
        }
        const [, bAfter] = await store.ordersOfAccounts([a.id, b.id], 10, all[2].id);
        expect(bAfter.map((o) => o.note)).toEqual(['b0', 'b1', 'b2']); // b's ids all come after a's third
        expect((await store.ordersOfAccounts([a.id], 10, all[4].id))[0]).toEqual([]);
      });
    });
  });
}
