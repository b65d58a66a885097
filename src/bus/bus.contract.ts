/**
 * The Bus port's behaviour, one suite for every adapter (as each store port's). A
 * factory gives two buses standing for two instances; the in-process adapter, having
 * one process, gives the same bus twice. Excluded from the build (tsconfig.build.json).
 */
import type { OrderEvent } from '../store';
import type { Bus } from './bus';

export const busEvent = (orderId: number, seq: number): OrderEvent => ({
  orderId,
  accountId: 1,
  seq,
  type: seq === 1 ? 'order.created' : 'order.updated',
  order: {
    id: orderId,
    accountId: 1,
    revision: seq,
    status: 'pending',
    items: [{ sku: 'A', quantity: 1, unit_price_cents: 100 }],
    currency: 'EUR',
    discount: null,
    note: `n${seq}`,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  },
  createdAt: '2026-01-01T00:00:00.000Z',
});

/** Collects what a bus hands its listener. */
export function listener(bus: Bus): { events: OrderEvent[]; catchUps: number; until(n: number, ms?: number): Promise<OrderEvent[]> } {
  const state = {
    events: [] as OrderEvent[],
    catchUps: 0,
    async until(n: number, ms = 3000) {
      const deadline = Date.now() + ms;
      while (state.events.length < n) {
        if (Date.now() > deadline) throw new Error(`bus: wanted ${n} events, got ${state.events.length}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return state.events;
    },
  };
  bus.listen({ event: (e) => state.events.push(e), reconnected: () => state.catchUps++ });
  return state;
}

export function runBusContract(name: string, makePair: () => Promise<{ a: Bus; b: Bus; close(): Promise<void> }>): void {
  describe(`Bus contract: ${name}`, () => {
    let pair: { a: Bus; b: Bus; close(): Promise<void> };
    beforeEach(async () => {
      pair = await makePair();
    });
    afterEach(async () => {
      await pair.close();
    });

    it('delivers a publish to its own instance synchronously, once', async () => {
      const seen = listener(pair.a);
      await pair.a.watch(7);
      pair.a.publish(busEvent(7, 1));
      expect(seen.events.map((e) => e.seq)).toEqual([1]); // before any await
      // No echo later. A barrier, not a pause: once the probe answers, the publish has reached
      // the engine; the other instance's publish comes after it, so an echo would arrive first.
      expect(await pair.a.ping()).toBe(true);
      pair.b.publish(busEvent(7, 2));
      expect((await seen.until(2)).map((e) => e.seq)).toEqual([1, 2]);
    });

    it('brings every event of a watched topic to the other instance, whole and in publish order', async () => {
      const onA = listener(pair.a);
      const onB = pair.b === pair.a ? onA : listener(pair.b);
      await pair.b.watch(8);
      for (let seq = 1; seq <= 20; seq++) pair.a.publish(busEvent(8, seq));
      const got = await onB.until(20);
      expect(got.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(got[4]).toEqual(busEvent(8, 5));
    });

    it('answers its readiness probe', async () => {
      await expect(pair.a.ping()).resolves.toBe(true);
    });

    it('never throws from publish, even closed', async () => {
      listener(pair.a);
      await pair.close();
      expect(() => pair.a.publish(busEvent(9, 1))).not.toThrow();
      pair = { ...pair, close: async () => undefined };
    });
  });
}
