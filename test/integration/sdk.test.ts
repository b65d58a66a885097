import { startTestServer, type TestServer } from '../support/server';
import { allOrders, createOrderlineClient, updateOrder } from '@orderline/sdk';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

describe('REST SDK against the running server', () => {
  it('revalidates cached reads with If-None-Match and serves the 304 from its cache', async () => {
    const seen: string[] = [];
    const spy: typeof fetch = (input, init) => {
      const req = input instanceof Request ? input : new Request(input, init);
      seen.push(req.headers.get('if-none-match') ?? '-');
      return fetch(req);
    };
    const { api, cache } = createOrderlineClient({ baseUrl: s.url, token: s.alice.token, fetch: spy });
    const created = await api.POST('/v2/orders', { body: { note: 'cached' } });
    const id = created.data!.id;
    const first = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: id } } });
    const second = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: id } } });
    expect(second.response.status).toBe(200);
    expect(second.data).toEqual(first.data);
    expect(cache.hits).toBe(1);
    expect(seen.slice(-2)).toEqual(['-', first.response.headers.get('etag')]);
  });

  it('reloads and reapplies a conditional write after a genuine 412', async () => {
    const statuses: number[] = [];
    let injected = false;
    // Before the SDK's first PATCH reaches the server, another writer uses the same
    // If-Match: the SDK's write must get 412, reload and reapply on the fresh order.
    const racing: typeof fetch = async (input, init) => {
      const req = input instanceof Request ? input : new Request(input, init);
      if (req.method === 'PATCH' && !injected) {
        injected = true;
        const competitor = await fetch(req.url, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${s.alice.token}`, 'content-type': 'application/merge-patch+json', 'if-match': req.headers.get('if-match')! },
          body: JSON.stringify({ note: 'theirs' }),
        });
        expect(competitor.status).toBe(200);
      }
      const res = await fetch(req);
      if (req.method === 'PATCH') statuses.push(res.status);
      return res;
    };
    const { api } = createOrderlineClient({ baseUrl: s.url, token: s.alice.token, fetch: racing });
    const id = (await api.POST('/v2/orders', { body: { note: 'mine' } })).data!.id;
    const seenNotes: (string | null)[] = [];
    const updated = await updateOrder(api, id, (current) => {
      seenNotes.push(current.note);
      return { note: `${current.note}+edited` };
    });
    expect(statuses).toEqual([412, 200]);
    expect(seenNotes).toEqual(['mine', 'theirs']);
    expect(updated.note).toBe('theirs+edited');
  });

  it('pages through every order with _links.next', async () => {
    const { api } = createOrderlineClient({ baseUrl: s.url, token: s.bob.token });
    const ids: number[] = [];
    for (let i = 0; i < 7; i++) ids.push((await api.POST('/v2/orders', { body: {} })).data!.id);
    const seen: number[] = [];
    for await (const o of allOrders(api, { limit: 3 })) seen.push(o.id);
    expect(seen).toEqual(ids);
  });
});
