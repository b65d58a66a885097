/**
 * The lifecycle port's behaviour, one suite every adapter runs with its own factory.
 * `seedDemo` fills every concern, so this suite reads its result through the other ports.
 */
import type { Store } from '../store';
import { fields } from './fixtures.contract';

/** A store not migrated yet; the suite closes it. */
export type LifecycleFactory = () => Promise<Store>;

export function runLifecycleContract(name: string, newStore: LifecycleFactory): void {
  describe(`StoreLifecycle contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await newStore();
      await store.migrate();
    });
    afterEach(() => store.close());

    it('migrates again without error or data loss, and answers ping', async () => {
      const a = await store.ensureAccount('alice');
      const { order } = await store.createOrder(a.id, fields());
      await store.migrate();
      await store.migrate();
      expect(await store.ping()).toBe(true);
      expect(await store.getOrder(a.id, order.id)).toEqual(order);
    });

    it('has a deployment id: the same on every call and after migrating again, another on another store', async () => {
      const id = await store.deploymentId();
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      await store.migrate();
      expect(await store.deploymentId()).toBe(id);
      const other = await newStore();
      try {
        await other.migrate();
        expect(await other.deploymentId()).not.toBe(id);
      } finally {
        await other.close();
      }
    });

    it('answers ping false once closed (never a rejection), and closes twice without error', async () => {
      await store.close();
      expect(await store.ping()).toBe(false);
      await store.close();
    });

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
      expect((await store.usersByIds(Array.from({ length: 12 }, (_, i) => `u${i + 1}`))).every((u) => u !== null)).toBe(true);
    });
  });
}
