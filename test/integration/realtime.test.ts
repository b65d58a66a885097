/**
 * SSE and WebSocket against the running server over a real SQLite file: event format,
 * resume within the ring, resync beyond it, access, bad messages, backpressure, the
 * accept limiter and shutdown. Ring size here: REPLAY_RATE 1 x REPLAY_WINDOW_S 5 = 5.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { WebSocket } from 'ws';
import { MAX_QUEUED_MESSAGES } from '../../src/realtime/ws';
import { StoreUnavailableError } from '../../src/store';
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, openSse, openWs, touch, WsClient } from '../support/streams';
import { validateErrorMessage, validateOrderEventMessage, validateResyncMessage, validateSubscribedMessage } from '../../generated/asyncapi/validators';

const RING = { REPLAY_RATE: '1', REPLAY_WINDOW_S: '5' };

/** A WebSocket upgrade request (fetch refuses Upgrade headers): the refusal's status, media type and body. */
function upgradeRequest(url: string, headers: Record<string, string>): Promise<{ status: number; contentType?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { ...headers, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body }));
    });
    req.on('upgrade', () => reject(new Error('upgraded')));
    req.on('error', reject);
    req.end();
  });
}
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

  it('sends retry once, subscribed (id: the resume point), then id/event/data per committed write, valid against the contract', async () => {
    const { id } = await createOrder(srv);
    const s = await openSse(srv, id);
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await touch(srv, id, 3);
    const [subscribed, ...events] = await s.reader!.take(4);
    expect(subscribed).toMatchObject({ id: '1', event: 'subscribed' });
    expect(JSON.parse(subscribed.data!)).toEqual({ type: 'subscribed', channel: `order:${id}`, seq: 1, head: 1 });
    expect(validateSubscribedMessage(JSON.parse(subscribed.data!))).toBe(true);
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
    const events = await s.reader!.take(5);
    expect(events.map((e) => [Number(e.id), e.event])).toEqual([
      [2, 'subscribed'],
      [3, 'order.updated'],
      [4, 'order.updated'],
      [5, 'order.updated'],
      [6, 'order.updated'],
    ]);
    s.close();
  });

  it('a client cut before its first order event resumes from the subscribed id and misses nothing written while away', async () => {
    const { id } = await createOrder(srv);
    const first = await openSse(srv, id);
    const [subscribed] = await first.reader!.take(1);
    expect(subscribed).toMatchObject({ event: 'subscribed', id: '1' });
    srv.realtime.dropConnections(); // cut, no order event seen
    await first.reader!.done;
    await touch(srv, id, 1); // seq 2, written while the client is away
    // What EventSource sends back: the last id it saw, the subscribed event's.
    const again = await openSse(srv, id, { 'last-event-id': subscribed.id! });
    const events = await again.reader!.take(2);
    expect(events.map((e) => [e.id, e.event])).toEqual([
      ['1', 'subscribed'],
      ['2', 'order.updated'],
    ]);
    again.close();
  });

  it('older than the ring: one resync event, then live', async () => {
    const { id } = await createOrder(srv);
    await touch(srv, id, 8); // seqs 2..9; the ring holds 5..9
    const s = await openSse(srv, id, { 'last-event-id': '2' });
    await touch(srv, id, 1);
    const [subscribed, resync, live] = await s.reader!.take(3);
    expect(JSON.parse(subscribed.data!)).toMatchObject({ type: 'subscribed', seq: 2, head: 9 });
    expect(resync.event).toBe('resync');
    expect(validateResyncMessage(JSON.parse(resync.data!))).toBe(true);
    expect(JSON.parse(resync.data!)).toMatchObject({ seq: 9, reason: 'gap_too_old' });
    expect(live.id).toBe('10');
    s.close();
  });

  it('Last-Event-ID: 0 means "seen nothing": every event from seq 1', async () => {
    const { id } = await createOrder(srv);
    await touch(srv, id, 2); // seqs 1..3
    const s = await openSse(srv, id, { 'last-event-id': '0' });
    const events = await s.reader!.take(4);
    expect(events.map((e) => [Number(e.id), e.event])).toEqual([
      [0, 'subscribed'],
      [1, 'order.created'],
      [2, 'order.updated'],
      [3, 'order.updated'],
    ]);
    s.close();
  });

  it('Last-Event-ID ahead of the topic: one resync whose id is the head, then live', async () => {
    const { id } = await createOrder(srv);
    const s = await openSse(srv, id, { 'last-event-id': '50' });
    await touch(srv, id, 1);
    const [subscribed, resync, live] = await s.reader!.take(3);
    expect(JSON.parse(subscribed.data!)).toMatchObject({ type: 'subscribed', seq: 50, head: 1 });
    expect(resync).toMatchObject({ event: 'resync', id: '1' });
    expect(JSON.parse(resync.data!)).toEqual({ type: 'resync', channel: `order:${id}`, seq: 1, reason: 'since_ahead' });
    expect(live.id).toBe('2');
    s.close();
  });

  it('a bad Last-Event-ID is a 400 problem+json with a code', async () => {
    const { id } = await createOrder(srv);
    const r = await srv.fetch(`/api/orders/${id}/stream`, { headers: { 'last-event-id': 'abc' } });
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toMatch(/problem\+json/);
    expect(await r.json()).toMatchObject({ status: 400, code: 'BAD_REQUEST', type: expect.stringMatching(/^https:/) });
    // One past the largest position: the detail names the bound, not only "an integer".
    const big = await srv.fetch(`/api/orders/${id}/stream`, { headers: { 'last-event-id': '9007199254740992' } });
    expect(await big.json()).toMatchObject({ status: 400, detail: 'Last-Event-ID must be an integer from 0 to 2^53 - 1' });
  });

  it('a topic that cannot be loaded ends the stream with retry:, logs, and the next request streams', async () => {
    const { id } = await createOrder(srv);
    const spy = jest.spyOn(srv.store, 'eventsAfter').mockRejectedValueOnce(new Error('store down'));
    try {
      const s = await openSse(srv, id);
      await s.reader!.done; // the server ended it
      // Only `retry:` (the head waits for the subscription, so no `subscribed` went out before the failure).
      expect(s.reader!.all()).toEqual([{ retry: '2000' }]);
      expect(srv.realtime.stats().sse).toBe(0);
      const again = await openSse(srv, id, { 'last-event-id': '0' });
      expect((await again.reader!.take(2)).map((e) => e.id)).toEqual(['0', '1']);
      again.close();
    } finally {
      spy.mockRestore();
    }
  });

  it("401 without a token, access_token works, 404 for another account's order or a missing one, 400 for an id not in canonical form (generated)", async () => {
    const { id } = await createOrder(srv);
    const anon = await openSse(srv, id, {}, 'anonymous');
    expect(anon.res.status).toBe(401);
    expect(anon.res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const viaQuery = await fetch(`${srv.url}/api/orders/${id}/stream?access_token=${srv.alice.token}`);
    expect(viaQuery.status).toBe(200);
    await viaQuery.body?.cancel();
    for (const [path, as] of [
      [`${id}`, 'bob'],
      ['999999', 'alice'],
    ] as const) {
      const r = await srv.fetch(`/api/orders/${path}/stream`, { as });
      expect(r.status).toBe(404);
      expect(r.headers.get('content-type')).toMatch(/problem\+json/);
    }
    // One URL per resource, as REST's /orders/01 is 400: 0, 01, 1., abc, -1, +1 name no order.
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom('0', `0${id}`, `${id}.`, `+${id}`, '-1', '1e3'),
          fc.stringMatching(/^[0-9a-z.+-]{1,8}$/).filter((t) => !/^[1-9][0-9]*$/.test(t) && !/^\.+$/.test(t)), // '.' and '..' are dot-segments, not ids
        ),
        async (path) => {
          const r = await srv.fetch(`/api/orders/${path}/stream`, { as: 'alice' });
          expect(r.status).toBe(400);
          expect(await r.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ pointer: 'path:orderId' }] });
        },
      ),
      { numRuns: 30 },
    );
  });

  it('reads a percent-encoded id as REST does: /api/orders/%31/stream is the stream of /orders/%31, invalid encoding is 400', async () => {
    const { id } = await createOrder(srv);
    const encoded = [...String(id)].map((d) => `%3${d}`).join('');
    expect((await srv.fetch(`/orders/${encoded}`, { as: 'alice' })).status).toBe(200);
    const r = await srv.fetch(`/api/orders/${encoded}/stream`, { as: 'alice' });
    expect(r.status).toBe(200);
    await r.body?.cancel();
    expect((await srv.fetch('/api/orders/%E0%A4%A/stream', { as: 'alice' })).status).toBe(400);
  });
});

describe('WebSocket /orders', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer(RING);
  });
  afterAll(() => srv.close());

  it('subscribe without since: subscribed at the head (seq = head), then every event with channel and seq; unsubscribe', async () => {
    const { id } = await createOrder(srv);
    const c = await ws(srv);
    c.send({ type: 'subscribe', channel: `order:${id}` });
    await c.until((m) => m.some((x) => x.type === 'subscribed'));
    expect(c.messages[0]).toEqual({ type: 'subscribed', channel: `order:${id}`, seq: 1, head: 1 });
    expect(validateSubscribedMessage(c.messages[0])).toBe(true);
    await touch(srv, id, 2);
    await c.until((m) => seqsOf(m).length === 2);
    for (const m of c.messages.slice(1)) {
      expect(validateOrderEventMessage(m)).toBe(true);
      expect(m.channel).toBe(`order:${id}`);
    }
    c.send({ type: 'unsubscribe', channel: `order:${id}` });
    await c.until((m) => m.some((x) => x.type === 'unsubscribed'));
    expect(c.messages.at(-1)).toEqual({ type: 'unsubscribed', channel: `order:${id}`, seq: 3 });
    await touch(srv, id, 1);
    // A barrier, not a pause: the write was published before its answer came back, and the
    // server answers this second unsubscribe on the same connection after anything it sent before.
    c.send({ type: 'unsubscribe', channel: `order:${id}` });
    await c.until((m) => m.some((x) => x.type === 'error' && x.code === 'not_subscribed'));
    expect(seqsOf(c.messages)).toEqual([2, 3]);
    c.ws.close();
  });

  it('one missed write: subscribed carries the resume point, so a spec-following client applies the replayed event', async () => {
    const { id } = await createOrder(srv);
    await touch(srv, id, 2); // topic at 3; the client saw 2
    for (const query of ['since=2', '']) {
      const c = await ws(srv, query);
      c.send({ type: 'subscribe', channel: `order:${id}`, ...(query ? {} : { since: 2 }) });
      await c.until((m) => seqsOf(m).length === 1);
      // Every seq on the topic, in arrival order, never goes backwards and the event is last + 1.
      expect(c.messages.map((m) => [m.type, m.seq])).toEqual([
        ['subscribed', 2],
        ['order.updated', 3],
      ]);
      expect(c.messages[0].head).toBe(3);
      c.ws.close();
    }
  });

  it('since is per subscription: the URL since belongs to the first subscribe only; since ahead resyncs', async () => {
    const a = await createOrder(srv);
    const b = await createOrder(srv);
    const d = await createOrder(srv);
    await touch(srv, a.id, 3); // a: 2..4
    await touch(srv, b.id, 8); // b: 2..9, ring 5..9
    await touch(srv, d.id, 1); // d: 2
    const c = await ws(srv, 'since=3');
    c.send({ type: 'subscribe', channel: `order:${a.id}` }); // the URL's since: after 3
    c.send({ type: 'subscribe', channel: `order:${b.id}` }); // no since of its own: live, not the URL's 3
    c.send({ type: 'subscribe', channel: `order:${d.id}`, since: 9 }); // ahead of the topic
    await c.until((m) => m.filter((x) => x.type === 'subscribed').length === 3 && m.some((x) => x.type === 'resync') && seqsOf(m).length >= 1);
    const on = (id: number) => c.messages.filter((m) => m.channel === `order:${id}`).map((m) => [m.type, m.seq]);
    expect(on(a.id)).toEqual([
      ['subscribed', 3],
      ['order.updated', 4],
    ]);
    expect(on(b.id)).toEqual([['subscribed', 9]]);
    expect(on(d.id)).toEqual([
      ['subscribed', 9],
      ['resync', 2],
    ]);
    expect(c.messages.find((m) => m.type === 'resync')).toEqual({ type: 'resync', channel: `order:${d.id}`, seq: 2, reason: 'since_ahead' });
    c.send({ type: 'subscribe', channel: `order:${b.id}`, since: 1 }); // too old: already subscribed first
    await c.until((m) => m.some((x) => x.type === 'error'));
    c.ws.close();
    const c2 = await ws(srv);
    c2.send({ type: 'subscribe', channel: `order:${b.id}`, since: 1 }); // older than the ring
    await c2.until((m) => m.some((x) => x.type === 'resync'));
    expect(c2.messages).toEqual([
      { type: 'subscribed', channel: `order:${b.id}`, seq: 1, head: 9 },
      { type: 'resync', channel: `order:${b.id}`, seq: 9, reason: 'gap_too_old' },
    ]);
    c2.ws.close();
  });

  it('since 0 means "seen nothing" in the URL and in subscribe: every event from seq 1', async () => {
    const { id } = await createOrder(srv);
    await touch(srv, id, 2); // 1..3
    for (const query of ['since=0', '']) {
      const c = await ws(srv, query);
      c.send({ type: 'subscribe', channel: `order:${id}`, ...(query ? {} : { since: 0 }) });
      await c.until((m) => seqsOf(m).length === 3);
      expect(c.messages[0]).toEqual({ type: 'subscribed', channel: `order:${id}`, seq: 0, head: 3 });
      expect(seqsOf(c.messages)).toEqual([1, 2, 3]);
      c.ws.close();
    }
  });

  it('a topic that cannot be loaded: an unavailable error, nothing pending, the same subscribe on the same socket works', async () => {
    const { id } = await createOrder(srv);
    const c = await ws(srv);
    const spy = jest.spyOn(srv.store, 'eventsAfter').mockRejectedValueOnce(new Error('store down'));
    try {
      c.send({ type: 'subscribe', channel: `order:${id}`, since: 0 });
      await c.until((m) => m.length === 1);
      expect(c.messages[0]).toMatchObject({ type: 'error', channel: `order:${id}`, code: 'unavailable', seq: null });
      expect(validateErrorMessage(c.messages[0])).toBe(true);
      expect(srv.realtime.stats().topics).toBe(0);
      c.send({ type: 'subscribe', channel: `order:${id}`, since: 0 });
      await c.until((m) => seqsOf(m).length === 1);
      expect(c.messages.slice(1)).toMatchObject([
        { type: 'subscribed', seq: 0 },
        { type: 'order.created', seq: 1 },
      ]);
    } finally {
      spy.mockRestore();
      c.ws.close();
    }
  });

  it("a subscribe that fails (store unreachable, topic not loaded) names its channel and leaves the URL's since to the same subscribe sent again", async () => {
    const { id } = await createOrder(srv);
    await touch(srv, id, 3); // 1..4
    const failures = [
      () => jest.spyOn(srv.store, 'getOrder').mockRejectedValueOnce(new StoreUnavailableError('sqlite', { cause: new Error('down') })),
      () => jest.spyOn(srv.store, 'eventsAfter').mockRejectedValueOnce(new Error('store down')),
    ];
    for (const fail of failures) {
      const c = await ws(srv, 'since=2');
      const spy = fail();
      try {
        c.send({ type: 'subscribe', channel: `order:${id}` });
        await c.until((m) => m.length === 1);
        expect(c.messages[0]).toMatchObject({ type: 'error', channel: `order:${id}`, code: 'unavailable', seq: null });
        expect(validateErrorMessage(c.messages[0])).toBe(true);
        c.send({ type: 'subscribe', channel: `order:${id}` });
        await c.until((m) => seqsOf(m).length === 2);
        expect(c.messages.slice(1)).toMatchObject([{ type: 'subscribed', seq: 2, head: 4 }, { seq: 3 }, { seq: 4 }]);
      } finally {
        spy.mockRestore();
        c.ws.close();
      }
    }
  });

  it("another account's order: an error message and no data; the connection stays open", async () => {
    const { id } = await createOrder(srv, {}, 'bob');
    const c = await ws(srv);
    c.send({ type: 'subscribe', channel: `order:${id}` });
    await c.until((m) => m.length === 1);
    expect(c.messages[0]).toMatchObject({ type: 'error', channel: `order:${id}`, code: 'not_found' });
    expect(validateErrorMessage(c.messages[0])).toBe(true);
    await touch(srv, id, 1, 'bob');
    const mine = await createOrder(srv);
    c.send({ type: 'subscribe', channel: `order:${mine.id}` });
    await c.until((m) => m.some((x) => x.type === 'subscribed'));
    expect(c.messages.filter((m) => m.channel === `order:${id}` && m.type !== 'error')).toEqual([]);
    c.ws.close();
  });

  it('a stream request carrying its token twice (Authorization and access_token): 400 invalid_request on SSE and WebSocket alike', async () => {
    const { id } = await createOrder(srv);
    const token = srv.alice.token;
    const sse = await fetch(`${srv.url}/api/orders/${id}/stream?access_token=${token}`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
    expect(sse.status).toBe(400);
    expect(sse.headers.get('www-authenticate')).toContain('error="invalid_request"');
    const ws = await upgradeRequest(`${srv.url}/orders?access_token=${token}`, { authorization: `Bearer ${token}` });
    expect(ws.status).toBe(400);
    expect(JSON.parse(ws.body)).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    // access_token twice (the same token or another): the token is not missing, it is sent twice.
    for (const second of [token, 'x']) {
      const query = `access_token=${token}&access_token=${second}`;
      const sse2 = await fetch(`${srv.url}/api/orders/${id}/stream?${query}`, { headers: { accept: 'text/event-stream' } });
      expect([sse2.status, sse2.headers.get('www-authenticate')]).toEqual([400, 'Bearer realm="orderline", error="invalid_request"']);
      const ws2 = await upgradeRequest(`${srv.url}/orders?${query}`, {});
      expect(JSON.parse(ws2.body)).toMatchObject({ status: 400, code: 'BAD_REQUEST', detail: expect.stringContaining('access_token once') });
    }
    // Another scheme in Authorization (a browser behind HTTP Basic auth sends it unasked) is no second token: access_token authenticates.
    const basic = { authorization: 'Basic Zm9vOmJhcg==' };
    const sse3 = await fetch(`${srv.url}/api/orders/${id}/stream?access_token=${token}`, { headers: { ...basic, accept: 'text/event-stream' } });
    expect(sse3.status).toBe(200);
    await sse3.body?.cancel();
    const opened = new WebSocket(`${srv.url.replace('http', 'ws')}/orders?access_token=${token}`, { headers: basic });
    await new Promise((resolve, reject) => (opened.once('open', resolve), opened.once('error', reject)));
    opened.close();
  });

  it('a message over the limit gets its 1009 close frame even when the client reads only after sending it all, not a reset', async () => {
    for (const mib of [1, 16]) {
      const socket = connect(Number(new URL(srv.url).port), '127.0.0.1');
      socket.write(
        `GET /orders HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer ${srv.alice.token}\r\n\r\n`,
      );
      let got = Buffer.alloc(0);
      socket.on('data', (d: Buffer) => (got = Buffer.concat([got, d])));
      socket.on('error', () => undefined);
      await new Promise<void>((resolve) => socket.on('data', () => got.includes('\r\n\r\n') && resolve()));
      got = got.subarray(got.indexOf('\r\n\r\n') + 4);
      // A masked text frame of `mib` MiB, sent whole before reading anything more (as a client busy sending does).
      const head = Buffer.from([0x81, 0x80 | 127, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]);
      head.writeBigUInt64BE(BigInt(mib * 2 ** 20), 2);
      socket.pause();
      const sent = await new Promise<string>((resolve) => socket.write(Buffer.concat([head, Buffer.alloc(mib * 2 ** 20)]), (err) => resolve(err ? 'write failed' : 'sent')));
      socket.resume();
      await new Promise((resolve) => socket.once('close', resolve));
      // The close frame: opcode 8, two bytes, 1009 (0x03f1). A reset would have dropped it, and failed the write.
      expect({ mib, sent, close: got.subarray(0, 4).toString('hex') }).toEqual({ mib, sent: 'sent', close: '880203f1' });
    }
  });

  it('an order id above 2^53 - 1 in a channel: invalid_message over WebSocket, 400 over SSE (no order has it)', async () => {
    const c = await ws(srv);
    c.send({ type: 'subscribe', channel: 'order:9007199254740992' });
    await c.until((m) => m.length === 1);
    expect(c.messages[0]).toMatchObject({ type: 'error', channel: 'order:9007199254740992', code: 'invalid_message' });
    expect(validateErrorMessage(c.messages[0])).toBe(true);
    c.ws.close();
    expect((await srv.fetch('/api/orders/9007199254740992/stream', { headers: { accept: 'text/event-stream' } })).status).toBe(400);
  });

  it('bad client messages (generated) each get an error message and the connection stays open', async () => {
    const c = await ws(srv);
    const { id } = await createOrder(srv);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc
            .record({ type: fc.constantFrom('subscribe', 'unsubscribe', 'publish'), channel: fc.oneof(fc.string(), fc.integer(), fc.constant('order:0')), since: fc.oneof(fc.integer({ max: -1 }), fc.string()) })
            .map((v) => JSON.stringify(v)),
        ),
        async (text) => {
          const before = c.messages.length;
          c.send(text);
          await c.until((m) => m.length > before);
          expect(c.messages[before].type).toBe('error');
          expect(validateErrorMessage(c.messages[before])).toBe(true); // the code is one of the contract's enum
        },
      ),
      { numRuns: 60 },
    );
    c.send({ type: 'subscribe', channel: `order:${id}` });
    await c.until((m) => m.some((x) => x.type === 'subscribed'));
    c.ws.close();
  });

  it('refuses the upgrade with problem+json (type, code): 401 without a token, 400 for a bad or repeated since, 404 elsewhere', async () => {
    const cases = [
      [`${srv.url}/orders`, {}, 401, 'UNAUTHORIZED'],
      [`${srv.url}/orders?since=-1`, { authorization: `Bearer ${srv.alice.token}` }, 400, 'BAD_REQUEST'],
      // Twice, even the same: a proxy may have read the other one.
      [`${srv.url}/orders?since=1&since=5`, { authorization: `Bearer ${srv.alice.token}` }, 400, 'BAD_REQUEST'],
      [`${srv.url}/orders?since=1&since=1`, { authorization: `Bearer ${srv.alice.token}` }, 400, 'BAD_REQUEST'],
      [`${srv.url}/elsewhere`, { authorization: `Bearer ${srv.alice.token}` }, 404, 'NOT_FOUND'],
    ] as const;
    for (const [url, headers, status, code] of cases) {
      const r = await upgradeRequest(url, headers);
      expect(r.status).toBe(status);
      expect(r.contentType).toBe('application/problem+json');
      expect(JSON.parse(r.body)).toMatchObject({ status, code, type: expect.stringMatching(/^https:\/\/orderline\.dev\/problems\//), title: expect.any(String) });
    }
    expect(await openWs(srv, '', null)).toMatchObject({ status: 401 });
  });

  it('access_token in the upgrade URL follows the service-wide bearer rule: one is a token, a repeated one is 400 invalid_request (as on SSE)', async () => {
    const once = await openWs(srv, `access_token=${srv.alice.token}`, null);
    expect(once).toBeInstanceOf(WsClient);
    if (once instanceof WsClient) once.ws.close();
    const twice = await upgradeRequest(`${srv.url}/orders?access_token=${srv.alice.token}&access_token=${srv.alice.token}`, {});
    expect(twice.status).toBe(400);
    expect(JSON.parse(twice.body)).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
  });

  it("reads a stream URL's query as every route does: an access_token behind a thousand other pairs counts; %FF is 400 everywhere", async () => {
    const filler = Array.from({ length: 1200 }, (_, i) => `u${i}=1`).join('&');
    const ws = await openWs(srv, `${filler}&access_token=${srv.alice.token}&since=0`, null);
    expect(ws).toBeInstanceOf(WsClient);
    if (ws instanceof WsClient) ws.ws.close();
    const { id } = await createOrder(srv);
    const sse = await srv.fetch(`/api/orders/${id}/stream?${filler}&access_token=${srv.alice.token}`, { as: 'anonymous', headers: { accept: 'text/event-stream' } });
    expect(sse.status).toBe(200);
    await sse.body?.cancel();
    const refused = [
      (await upgradeRequest(`${srv.url}/orders?access_token=${srv.alice.token}&x=%FF`, {})).status,
      (await srv.fetch(`/api/orders/${id}/stream?x=%FF`, { headers: { accept: 'text/event-stream' } })).status,
      (await srv.fetch('/orders?limit=1&cursor=%FF')).status,
      (await srv.fetch('/graphql?query=%7Bviewer%7Bname%7D%7D&x=%FF')).status,
    ];
    expect(refused).toEqual([400, 400, 400, 400]);
  });

  it('a store outage while checking the token: 503 problem+json with Retry-After, not a silently destroyed socket', async () => {
    const token = await srv.tokenFor('carol'); // not in the auth cache
    const spy = jest.spyOn(srv.store, 'tokenBySelector').mockRejectedValueOnce(new StoreUnavailableError('sqlite', { cause: new Error('store down') }));
    try {
      const r = await upgradeRequest(`${srv.url}/orders`, { authorization: `Bearer ${token}` });
      expect(r.status).toBe(503);
      expect(r.contentType).toBe('application/problem+json');
      expect(JSON.parse(r.body)).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    } finally {
      spy.mockRestore();
    }
    expect(await openWs(srv, `access_token=${token}`, null)).toBeInstanceOf(WsClient); // and the next upgrade works
    // A failure that is no outage (a bug) is a 500, logged, as the same token check answers it on the SSE stream.
    const other = await srv.tokenFor('erin');
    for (const ask of [
      () => upgradeRequest(`${srv.url}/orders`, { authorization: `Bearer ${other}` }),
      async () => ({ status: (await fetch(`${srv.url}/api/orders/1/stream`, { headers: { authorization: `Bearer ${other}`, accept: 'text/event-stream' } })).status }),
    ]) {
      const bug = jest.spyOn(srv.store, 'tokenBySelector').mockRejectedValueOnce(new Error('a bug'));
      try {
        expect((await ask()).status).toBe(500);
      } finally {
        bug.mockRestore();
      }
    }
  });

  it('a handshake is timed from its arrival: a token check that waits shows in its duration', async () => {
    const token = await srv.tokenFor('dora'); // not in the auth cache
    const sum = async () => Number(/orderline_http_request_duration_seconds_sum\{method="GET",route="ws:\/orders",status="101"\} ([\d.e-]+)/.exec(await srv.metrics.registry.metrics())?.[1] ?? 0);
    const before = await sum();
    const real = srv.store.tokenBySelector.bind(srv.store);
    const spy = jest.spyOn(srv.store, 'tokenBySelector').mockImplementationOnce(async (selector) => {
      await new Promise((r) => setTimeout(r, 300));
      return real(selector);
    });
    try {
      const ws = await openWs(srv, `access_token=${token}`, null);
      expect(ws).toBeInstanceOf(WsClient);
      if (ws instanceof WsClient) ws.ws.close();
    } finally {
      spy.mockRestore();
    }
    expect((await sum()) - before).toBeGreaterThanOrEqual(0.3);
  });

  it("handles a connection's messages in the order sent, however long a subscribe waits for the store", async () => {
    const { id } = await createOrder(srv);
    const channel = `order:${id}`;
    const c = await ws(srv);
    // Each subscribe's store read answers a turn late: a message sent behind it would overtake it if it could.
    const getOrder = srv.store.getOrder.bind(srv.store);
    const late = jest.spyOn(srv.store, 'getOrder').mockImplementation(async (account, orderId) => {
      await new Promise((r) => setImmediate(r));
      return getOrder(account, orderId);
    });
    try {
      c.send({ type: 'subscribe', channel, since: 1 });
      c.send({ type: 'unsubscribe', channel });
      c.send({ type: 'subscribe', channel, since: 1 });
      c.send({ type: 'unsubscribe', channel });
      await c.until((m) => m.filter((x) => x.type === 'unsubscribed' || x.type === 'error').length >= 2);
    } finally {
      late.mockRestore();
    }
    await touch(srv, id, 1); // seq 2: nobody on this connection listens any more
    c.send({ type: 'subscribe', channel }); // live from the revision now: a barrier behind anything still on its way
    await c.until((m) => m.length >= 5);
    expect(c.messages.map((m) => [m.type, m.seq])).toEqual([
      ['subscribed', 1],
      ['unsubscribed', 1],
      ['subscribed', 1],
      ['unsubscribed', 1],
      ['subscribed', 2],
    ]);
    c.ws.close();
  });

  it('stops reading a connection whose queued messages reach MAX_QUEUED_MESSAGES, and reads on once they are handled', async () => {
    const orders = await Promise.all(Array.from({ length: 3 }, () => createOrder(srv)));
    const c = await ws(srv);
    // The first subscribe's store read is held, so every message behind it waits in the queue.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const getOrder = srv.store.getOrder.bind(srv.store);
    const late = jest.spyOn(srv.store, 'getOrder').mockImplementationOnce(async (account, orderId) => {
      await held;
      return getOrder(account, orderId);
    });
    const pause = jest.spyOn(WebSocket.prototype, 'pause');
    const resume = jest.spyOn(WebSocket.prototype, 'resume');
    try {
      const sent = MAX_QUEUED_MESSAGES + 20;
      // One subscribe per order, then bad messages: each is answered in its turn.
      for (const o of orders) c.send({ type: 'subscribe', channel: `order:${o.id}` });
      for (let i = orders.length; i < sent; i++) c.send('not json');
      while (pause.mock.calls.length === 0) await new Promise((r) => setImmediate(r));
      expect(resume).not.toHaveBeenCalled();
      release();
      await c.until((m) => m.length >= sent);
      expect(resume).toHaveBeenCalled();
      expect(c.messages.slice(0, 3).map((m) => [m.type, m.channel])).toEqual(orders.map((o) => ['subscribed', `order:${o.id}`]));
      expect(c.messages.slice(3).every((m) => m.type === 'error' && m.code === 'bad_message')).toBe(true);
    } finally {
      release();
      late.mockRestore();
      pause.mockRestore();
      resume.mockRestore();
      c.ws.close();
    }
  });
});

describe('backpressure, accept limiter, shutdown', () => {
  it('slow consumers: a stalled WebSocket that reads again a minute later sees 1013; one that never reads is destroyed after two minutes without progress; a stalled SSE stream is ended', async () => {
    let now = 0; // the slow-peer sweep's clock: "a minute later" without waiting a minute
    const srv = await startTestServer({ MAX_BUFFER_BYTES: '65536' }, { now: () => now });
    try {
      const items = Array.from({ length: 100 }, (_, i) => ({ sku: `SKU-${i}-${'x'.repeat(54)}`, quantity: 1, unit_price_cents: 1 }));
      const { id } = await createOrder(srv, { items }); // each event carries ~10 KB
      const stalled = async () => {
        const c = await ws(srv);
        c.send({ type: 'subscribe', channel: `order:${id}` });
        await c.until((m) => m.some((x) => x.type === 'subscribed'));
        const socket = (c.ws as unknown as { _socket: import('node:net').Socket })._socket;
        socket.pause(); // a client that stops reading
        return { c, socket };
      };
      const resumes = await stalled();
      const never = await stalled();
      const s = await openSse(srv, id, {}, 'alice', false);
      const sseReader = s.res.body!.getReader(); // and one that does not read for now
      const closes = async () => Number(/orderline_stream_backpressure_closes_total (\d+)/.exec(await srv.scrape())?.[1]);
      // Writes until the kernel's buffers are full and each connection's queue overflows (loopback buffers hold megabytes).
      for (let i = 0; i < 200 && (await closes()) < 3; i++) await Promise.all([1, 2, 3, 4].map(() => touch(srv, id, 5)));
      expect(await closes()).toBe(3);
      await touch(srv, id, 5); // later writes reach nobody and queue nothing
      expect(srv.realtime.stats()).toEqual({ topics: 0, sse: 0, ws: expect.any(Number) });
      expect(srv.realtime.slowPeers.size).toBe(3);
      now += 61_000; // a minute passes with every client stalled: their sockets are kept for them
      srv.realtime.slowPeers.sweep();
      expect(srv.realtime.slowPeers.size).toBe(3);
      resumes.socket.resume(); // it reads what was sent before the close, then the close frame
      expect(await resumes.c.closed(60_000)).toBe(1013);
      expect(resumes.c.closeReason).toBe('Try again later');
      // the SSE response was ended: reading drains what was buffered, then done
      let done = false;
      for (let i = 0; i < 1_000_000 && !done; i++) done = (await sseReader.read()).done;
      expect(done).toBe(true);
      const watched = srv.realtime.slowPeers.size; // the one that never reads, and maybe a drained one not closed yet
      now += 120_000; // the last one drained nothing for two minutes: destroyed, its memory freed
      srv.realtime.slowPeers.sweep();
      expect(srv.realtime.slowPeers.size).toBe(watched - 1);
      never.socket.resume(); // too late: the socket is gone, no close frame
      expect(await never.c.closed(60_000)).toBe(1006);
    } finally {
      await srv.close();
    }
  }, 180_000);

  it('over ACCEPT_BURST new streams: 503 with Retry-After for SSE and the upgrade; other requests still served', async () => {
    const now = 0; // the limiter's clock stands still: no token comes back however slow the machine is
    const srv = await startTestServer({ ACCEPT_RATE: '1', ACCEPT_BURST: '2' }, { now: () => now });
    try {
      const { id } = await createOrder(srv);
      const a = await openSse(srv, id);
      const b = await ws(srv);
      const c = await openSse(srv, id);
      expect(c.res.status).toBe(503);
      expect(Number(c.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await c.res.json()).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
      const d = await openWs(srv);
      expect(d).toMatchObject({ status: 503, headers: { 'retry-after': expect.any(String), 'content-type': 'application/problem+json' } });
      expect((await srv.fetch(`/orders/${id}`)).status).toBe(200);
      a.close();
      b.ws.close();
    } finally {
      await srv.close();
    }
  });

  it('Retry-After tells each refused client (SSE or upgrade alike) when its place in the line comes, spread at the rate', async () => {
    const now = 0; // a clock that stands still: the line is all the limiter knows
    // Rate 2/s, burst 4: places are promised half a second apart after the next token.
    const srv = await startTestServer({ ACCEPT_RATE: '2', ACCEPT_BURST: '4' }, { now: () => now });
    try {
      const { id } = await createOrder(srv);
      const open = [await openSse(srv, id), await openSse(srv, id), await openSse(srv, id), await openSse(srv, id)];
      expect(open.map((o) => o.res.status)).toEqual([200, 200, 200, 200]);
      const told: string[] = [];
      for (let i = 0; i < 6; i++) {
        if (i % 2 === 0) {
          const r = await openSse(srv, id);
          expect(r.res.status).toBe(503);
          told.push(r.res.headers.get('retry-after') ?? '');
        } else {
          const r = await openWs(srv);
          expect(r).toMatchObject({ status: 503 });
          told.push('headers' in r ? String(r.headers['retry-after']) : '');
        }
      }
      // Places at 0.5, 1, 1.5, 2, 2.5, 3 s: each second is promised to as many clients as the rate admits in it.
      expect(told).toEqual(['1', '1', '2', '2', '3', '3']);
      for (const o of open) o.close();
    } finally {
      await srv.close();
    }
  });

  it('shutdown: WebSocket clients get 1001, SSE clients get retry: and the stream ends', async () => {
    const srv = await startTestServer();
    const { id } = await createOrder(srv);
    const c = await ws(srv);
    // Both are registered once open: the upgrade's connection is, and an SSE response's head
    // leaves with its subscription acknowledged (retry: and subscribed in one write).
    const s = await openSse(srv, id);
    srv.realtime.close();
    expect(await c.closed()).toBe(1001);
    await s.reader!.done;
    expect(s.reader!.all().filter((e) => e.retry !== undefined).length).toBe(2);
    await srv.close();
  });
});

describe.each(['0', '5'])('WRITE_DELAY_MS=%s: a replay bigger than MAX_BUFFER_BYTES to a client that reads', (delay) => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({ WRITE_DELAY_MS: delay, MAX_BUFFER_BYTES: '65536' });
  });
  afterAll(() => srv.close());

  it('is delivered whole: bytes held for one turn (the write delay, node corking the socket) are no slow consumer (no 1013), over WebSocket and SSE', async () => {
    // 100 items of 64-character SKUs: each event is about 11 KB, 30 of them about 330 KB.
    const items = Array.from({ length: 100 }, (_, i) => ({ sku: `S${i}`.padEnd(64, 'x'), quantity: 1, unit_price_cents: 1 }));
    const { id } = await createOrder(srv, { items });
    await touch(srv, id, 30);
    const c = await ws(srv);
    try {
      c.send({ type: 'subscribe', channel: `order:${id}`, since: 1 });
      await c.until((m) => seqsOf(m).length === 30 || c.closeCode !== undefined);
      expect(c.closeCode).toBeUndefined();
      expect(seqsOf(c.messages)).toEqual(Array.from({ length: 30 }, (_, i) => i + 2));
    } finally {
      c.ws.close();
    }
    const s = await openSse(srv, id, { 'last-event-id': '1' });
    try {
      const events = await s.reader!.take(31); // subscribed, then the 30 events
      expect(events.slice(1).map((e) => Number(e.id))).toEqual(Array.from({ length: 30 }, (_, i) => i + 2));
    } finally {
      s.close();
    }
  });
});

describe('a replay bigger than the kernel takes, to an SSE client that does not read', () => {
  let srv: TestServer;
  beforeAll(async () => {
    // A ring of 1,200 events (REPLAY_RATE x REPLAY_WINDOW_S), each about 11 KB.
    srv = await startTestServer({ MAX_BUFFER_BYTES: '65536', REPLAY_RATE: '4' });
  });
  afterAll(() => srv.close());

  it('is held up to MAX_BUFFER_BYTES, then the stream ends as a slow consumer: the ring is not copied into the socket', async () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ sku: `S${i}`.padEnd(64, 'x'), quantity: 1, unit_price_cents: 1 }));
    const { id } = await createOrder(srv, { items });
    // About 12 MB of replay: more than loopback's buffers take from a peer that reads nothing (a few MB).
    await touch(srv, id, 1100);
    const closes = async () => Number(/orderline_stream_backpressure_closes_total (\d+)/.exec(await srv.scrape())?.[1]);
    const before = await closes();
    const { hostname, port } = new URL(srv.url);
    const socket = connect({ port: Number(port), host: hostname });
    try {
      socket.on('error', () => undefined);
      const first = new Promise<void>((resolve) => socket.once('data', () => resolve()));
      socket.write(`GET /api/orders/${id}/stream HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${srv.alice.token}\r\nAccept: text/event-stream\r\nLast-Event-ID: 1\r\n\r\n`);
      await first;
      socket.pause(); // from here on the client reads nothing
      // The replay is written in the turn that sent the head: the stream ends within it, or soon after.
      for (let i = 0; i < 500 && (await closes()) === before; i++) await new Promise((r) => setTimeout(r, 10));
      expect(await closes()).toBe(before + 1);
      expect(srv.realtime.stats().sse).toBe(0);
      // What the server holds for the connection: at most its socket's high-water mark and one event, never the ring.
      expect(srv.mostHeldBytes()).toBeLessThanOrEqual(65536 + 16384 + 12_000);
    } finally {
      socket.destroy();
    }
  }, 60_000);
});
