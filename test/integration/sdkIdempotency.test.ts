import { startTestServer, type TestServer } from '../support/server';
import { createOrderlineClient, updateOrder } from '@orderline/sdk';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

/**
 * A fetch whose first `method` request reaches the server (which commits it) but whose answer
 * never reaches the client (a reset connection); `sent` lists what each `method` request carried.
 */
function losingFirst(method: string, carried: (req: Request) => string): { fetch: typeof fetch; sent: string[] } {
  const sent: string[] = [];
  let lost = false;
  return {
    sent,
    fetch: async (input, init) => {
      const req = new Request(input, init);
      if (req.method === method) sent.push(carried(req));
      const res = await fetch(req);
      if (req.method === method && !lost) {
        lost = true;
        throw new TypeError('fetch failed (connection reset)');
      }
      return res;
    },
  };
}

describe('SDK creates with an Idempotency-Key by default', () => {
  it('retries a create whose response was lost with the same key: one order, the replayed answer', async () => {
    const { fetch: flaky, sent: keys } = losingFirst('POST', (req) => req.headers.get('idempotency-key') ?? '-');
    const { api } = createOrderlineClient({ baseUrl: s.url, token: s.alice.token, fetch: flaky });
    const before = (await s.store.listOrders(s.alice.account.id, 0, 100)).orders.length;
    const created = await api.POST('/v2/orders', { body: { note: 'sdk-once' } });
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get('idempotent-replayed')).toBe('true');
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect((await s.store.listOrders(s.alice.account.id, 0, 100)).orders.length).toBe(before + 1);
  });
});

describe('SDK order writes with an Idempotency-Key', () => {
  it('updateOrder applies its change once when the PATCH landed but its answer was lost (the retry replays, no 412)', async () => {
    const { fetch: flaky, sent: writes } = losingFirst('PATCH', (req) => `${req.headers.get('if-match')} ${req.headers.get('idempotency-key')}`);
    const { api } = createOrderlineClient({ baseUrl: s.url, token: s.alice.token, fetch: flaky });
    const created = await api.POST('/v2/orders', { body: { items: [{ sku: 'A', quantity: 1, unit_price_cents: 100 }] } });
    const id = created.data!.id;
    let runs = 0;
    const updated = await updateOrder(api, id, (current) => (runs++, { items: [...current.items, { sku: 'GIFT', quantity: 1, unit_price_cents: 0 }] }));
    expect(runs).toBe(1);
    expect(updated.items.map((i) => i.sku)).toEqual(['A', 'GIFT']);
    expect(writes).toHaveLength(2);
    expect(writes[1]).toBe(writes[0]); // the same If-Match and the same key
    const stored = await s.store.getOrder(s.alice.account.id, id);
    expect(stored?.items.map((i) => i.sku)).toEqual(['A', 'GIFT']);
  });
});
