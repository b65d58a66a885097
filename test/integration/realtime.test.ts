/**
 * SSE and WebSocket against the running server over a real SQLite file: event format,
 * resume within the ring, resync beyond it, access, bad messages, backpressure, the
 * accept limiter and shutdown. Ring size here: REPLAY_RATE 1 x REPLAY_WINDOW_S 5 = 5.
 */
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, openSse, openWs, touch, WsClient } from '../support/streams';
import { validateOrderEventMessage, validateResyncMessage } from '../../generated/asyncapi/validators';

const RING = { REPLAY_RATE: '1', REPLAY_WINDOW_S: '5' };
const seqsOf = (msgs: Record<string, unknown>[]) => msgs.filter((m) => String(m.type).startsWith('order.')).map((m) => m.seq);

async function ws(srv: TestServer, query = ''): Promise<WsClient> {
  const c = await openWs(srv, query);
  if (!(c instanceof WsClient)) throw new Error(`upgrade refused: ${c.status}`);
  return c;
}

describe('SSE /api/orders/{id}/stream', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer(RING);
  });
  afterAll(() => srv.close());

  it('sends retry once, then id/event/data per committed write, valid against the contract', async () => {
    const { id } = await createOrder(srv);
    const s = await openSse(srv, id);
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await touch(srv, id, 3);
    const events = await s.reader!.take(3);
    expect(events.map((e) => [e.id, e.event])).toEqual([
      ['2', 'order.updated'],
      ['3', 'order.updated'],
      ['4', 'order.updated'],
    ]);
    for (const e of events) expect(validateOrderEventMessage(JSON.parse(e.data!))).toBe(true);
    expect(s.reader!.all().filter((e) => e.retry !== undefined)).toHaveLength(1);
    expect(s.reader!.all()[0].retry).toBeDefined();
    s.close();
  });

  it('Last-Event-ID replays every later event exactly once, then live', async () => {
    const { id } = await createOrder(srv);
    await touch(srv, id, 4); // seqs 2..5
    const s = await openSse(srv, id, { 'last-event-id': '2' });
    await touch(srv, id, 1); // 6, live
    const events = await s.reader!.take(4);
    expect(events.map((e) => Number(e.id))).toEqual([3, 4, 5, 6]);
    s.close();
  });

  it('older than the ring: one resync event, then live', async () => {
    const { id } = await createOrder(srv);
    await touch(srv, id, 8); // seqs 2..9; the ring holds 5..9
    const s = await openSse(srv, id, { 'last-event-id': '2' });
    await touch(srv, id, 1);
    const [resync, live] = await s.reader!.take(2);
    expect(resync.event).toBe('resync');
    expect(validateResyncMessage(JSON.parse(resync.data!))).toBe(true);
    expect(JSON.parse(resync.data!)).toMatchObject({ seq: 9, reason: 'gap_too_old' });
    expect(live.id).toBe('10');
    s.close();
  });

  it("401 without a token, access_token works, 404 for another account's order or a bad id", async () => {
    const { id } = await createOrder(srv);
    const anon = await openSse(srv, id, {}, 'anonymous');
    expect(anon.res.status).toBe(401);
    expect(anon.res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const viaQuery = await fetch(`${srv.url}/api/orders/${id}/stream?access_token=${srv.alice.token}`);
    expect(viaQuery.status).toBe(200);
    await viaQuery.body?.cancel();
    for (const [path, as] of [[`${id}`, 'bob'], ['0', 'alice'], ['abc', 'alice'], ['999999', 'alice']] as const) {
      const r = await srv.fetch(`/api/orders/${path}/stream`, { as });
      expect(r.status).toBe(404);
      expect(r.headers.get('content-type')).toMatch(/problem\+json/);
    }
  });
});

describe('WebSocket /orders', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer(RING);
  });
  afterAll(() => srv.close());

  it('subscribe: subscribed with the current seq, then every event with channel and seq; unsubscribe', async () => {
    const { id } = await createOrder(srv);
    const c = await ws(srv);
    c.send({ type: 'subscribe', channel: `order:${id}` });
    await c.until((m) => m.some((x) => x.type === 'subscribed'));
    expect(c.messages[0]).toEqual({ type: 'subscribed', channel: `order:${id}`, seq: 1 });
    await touch(srv, id, 2);
    await c.until((m) => seqsOf(m).length === 2);
    for (const m of c.messages.slice(1)) {
      expect(validateOrderEventMessage(m)).toBe(true);
      expect(m.channel).toBe(`order:${id}`);
    }
    c.send({ type: 'unsubscribe', channel: `order:${id}` });
    await c.until((m) => m.some((x) => x.type === 'unsubscribed'));
    await touch(srv, id, 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(seqsOf(c.messages)).toEqual([2, 3]);
    c.ws.close();
  });

  it('since per subscription, the URL since as default, resync beyond the ring', async () => {
    const a = await createOrder(srv);
    const b = await createOrder(srv);
    await touch(srv, a.id, 3); // a: 2..4
    await touch(srv, b.id, 8); // b: 2..9, ring 5..9
    const c = await ws(srv, 'since=3');
    c.send({ type: 'subscribe', channel: `order:${a.id}` }); // URL default: after 3
    c.send({ type: 'subscribe', channel: `order:${b.id}`, since: 1 }); // too old
    await c.until((m) => m.some((x) => x.type === 'resync') && seqsOf(m).length >= 1);
    expect(c.messages.filter((m) => m.channel === `order:${a.id}` && String(m.type).startsWith('order.')).map((m) => m.seq)).toEqual([4]);
    expect(c.messages.find((m) => m.type === 'resync')).toEqual({ type: 'resync', channel: `order:${b.id}`, seq: 9, reason: 'gap_too_old' });
    c.ws.close();
  });

  it("another account's order: an error message and no data; the connection stays open", async () => {
    const { id } = await createOrder(srv, {}, 'bob');
    const c = await ws(srv);
    c.send({ type: 'subscribe', channel: `order:${id}` });
    await c.until((m) => m.length === 1);
    expect(c.messages[0]).toMatchObject({ type: 'error', channel: `order:${id}`, code: 'not_found' });
    await touch(srv, id, 1, 'bob');
    const mine = await createOrder(srv);
    c.send({ type: 'subscribe', channel: `order:${mine.id}` });
    await c.until((m) => m.some((x) => x.type === 'subscribed'));
    expect(c.messages.filter((m) => m.channel === `order:${id}` && m.type !== 'error')).toEqual([]);
    c.ws.close();
  });

  it('bad client messages (generated) each get an error message and the connection stays open', async () => {
    const c = await ws(srv);
    const { id } = await createOrder(srv);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc.record({ type: fc.constantFrom('subscribe', 'unsubscribe', 'publish'), channel: fc.oneof(fc.string(), fc.integer(), fc.constant('order:0')), since: fc.oneof(fc.integer({ max: -1 }), fc.string()) }).map((v) => JSON.stringify(v)),
        ),
        async (text) => {
          const before = c.messages.length;
          c.send(text);
          await c.until((m) => m.length > before);
          expect(c.messages[before].type).toBe('error');
        },
      ),
      { numRuns: 60 },
    );
    c.send({ type: 'subscribe', channel: `order:${id}` });
    await c.until((m) => m.some((x) => x.type === 'subscribed'));
    c.ws.close();
  });

  it('refuses the upgrade with 401 without a token and 400 for a bad since', async () => {
    const anon = await openWs(srv, '', null);
    expect(anon).toMatchObject({ status: 401 });
    const bad = await openWs(srv, 'since=-1');
    expect(bad).toMatchObject({ status: 400 });
  });
});

describe('backpressure, accept limiter, shutdown', () => {
  it('closes a stalled WebSocket with 1013 and ends a stalled SSE stream once MAX_BUFFER_BYTES is pending', async () => {
    const srv = await startTestServer({ MAX_BUFFER_BYTES: '65536' });
    try {
      const items = Array.from({ length: 100 }, (_, i) => ({ sku: `SKU-${i}-${"x".repeat(50)}`, quantity: 1, unit_price_cents: 1 }));
      const { id } = await createOrder(srv, { items }); // each event carries ~9 KB
      const c = await ws(srv);
      c.send({ type: 'subscribe', channel: `order:${id}` });
      await c.until((m) => m.some((x) => x.type === 'subscribed'));
      const s = await openSse(srv, id, {}, 'alice', false);
      const wsSocket = (c.ws as unknown as { _socket: import('node:net').Socket })._socket;
      wsSocket.pause(); // a client that stops reading
      const sseReader = s.res.body!.getReader(); // and one that never reads
      // ~9 KB per event: write until both have more pending than the socket buffers hold
      const closes = async () => Number(/orderline_stream_backpressure_closes_total (\d+)/.exec(await (await srv.fetch('/metrics')).text())?.[1]);
      for (let i = 0; i < 100 && (await closes()) < 2; i++) await touch(srv, id, 25);
      expect(await closes()).toBe(2);
      wsSocket.resume(); // it reads what was sent before the close, then the close frame
      expect(await c.closed(10_000)).toBe(1013);
      expect(c.closeReason).toBe('Try again later');
      // the SSE response was ended: reading drains what was buffered, then done
      let done = false;
      for (let i = 0; i < 10_000 && !done; i++) done = (await sseReader.read()).done;
      expect(done).toBe(true);
      expect(srv.realtime.stats()).toEqual({ topics: 0, sse: 0, ws: expect.any(Number) });
    } finally {
      await srv.close();
    }
  });

  it('over ACCEPT_BURST new streams: 503 with Retry-After for SSE and the upgrade; other requests still served', async () => {
    const srv = await startTestServer({ ACCEPT_RATE: '1', ACCEPT_BURST: '2' });
    try {
      const { id } = await createOrder(srv);
      const a = await openSse(srv, id);
      const b = await ws(srv);
      const c = await openSse(srv, id);
      expect(c.res.status).toBe(503);
      expect(Number(c.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const d = await openWs(srv);
      expect(d).toMatchObject({ status: 503, headers: { 'retry-after': expect.any(String) } });
      expect((await srv.fetch(`/orders/${id}`)).status).toBe(200);
      a.close();
      b.ws.close();
    } finally {
      await srv.close();
    }
  });

  it('shutdown: WebSocket clients get 1001, SSE clients get retry: and the stream ends', async () => {
    const srv = await startTestServer();
    const { id } = await createOrder(srv);
    const c = await ws(srv);
    const s = await openSse(srv, id);
    await new Promise((r) => setTimeout(r, 50));
    srv.realtime.close();
    expect(await c.closed()).toBe(1001);
    await s.reader!.done;
    expect(s.reader!.all().filter((e) => e.retry !== undefined).length).toBe(2);
    await srv.close();
  });
});
