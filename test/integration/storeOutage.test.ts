/**
 * PostgreSQL going away under load, for real: an embedded PostgreSQL the test stops
 * (fast shutdown: open sessions get 57P01, new connections ECONNREFUSED) and starts
 * again. While it is down every request that needs it is a 503 problem+json with
 * Retry-After (never a 500, never a hang), readiness names the store, and the store
 * reports each failure to its onError; once it is back the same server serves again without a restart, every
 * acknowledged write is there, and a stream held open through the outage carries on.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createApp, type App } from '../../src/app';
import { parseConfig } from '../../src/config';
import { issueToken, PostgresStore } from '../../src/store';
import { expectContract } from '../support/contract';
import { embeddedPostgres, type EmbeddedPostgres } from '../support/embeddedPostgres';
import { createOrder, openSse, openWs, WsClient, type StreamTarget } from '../support/streams';

jest.setTimeout(60_000);

describe('PostgreSQL stopped and started under a running server', () => {
  let pg: EmbeddedPostgres;
  let store: PostgresStore;
  let app: App;
  let server: Server;
  let target: StreamTarget;
  let dir: string;
  const storeErrors: Error[] = [];
  const patch = (id: number, note: string) => target.fetch(`/orders/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json', 'if-match': '*' }, body: JSON.stringify({ note }) });

  beforeAll(async () => {
    pg = await embeddedPostgres();
    await pg.start();
    dir = mkdtempSync(join(tmpdir(), 'orderline-outage-'));
    // No auth cache: every request asks the store for its token, so every one meets the outage.
    const parsed = parseConfig({ DATA_DIR: dir, AUTH_CACHE_TTL_MS: '0' });
    if (!parsed.ok) throw new Error(parsed.error);
    store = new PostgresStore(pg.url, { connectionTimeoutMillis: 2000, onError: (err) => storeErrors.push(err) });
    await store.migrate();
    const account = await store.ensureAccount('alice');
    const { token, selector, verifierHash } = issueToken();
    await store.addToken(account.id, selector, verifierHash);
    app = createApp({ config: parsed.config, store, logger: pino({ level: process.env.DEBUG_OUTAGE ? 'error' : 'silent' }) });
    server = createServer(app.listener);
    app.realtime.attach(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    target = {
      url,
      alice: { token },
      fetch: (path, init = {}) => {
        const headers = new Headers(init.headers);
        if (!headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
        return fetch(url + path, { ...init, headers });
      },
    };
  });

  afterAll(async () => {
    app?.realtime.close();
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    await store?.close();
    await pg?.quit();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 + Retry-After while it is down, and serves again when it is back, with nothing acknowledged lost', async () => {
    const acknowledged = new Map<number, string>();
    const { id } = await createOrder(target);
    const other = await createOrder(target);
    for (let i = 0; i < 3; i++) {
      const res = await patch(id, `before-${i}`);
      expect(res.status).toBe(200);
      acknowledged.set(id, `before-${i}`);
    }
    // A stream held open through the outage (its topic is loaded, its socket stays up).
    const ws = await openWs(target);
    if (!(ws instanceof WsClient)) throw new Error(`upgrade refused: ${ws.status}`);
    ws.send({ type: 'subscribe', channel: `order:${id}` });
    await ws.until((m) => m.some((x) => x.type === 'subscribed'));

    await pg.stop();

    // Each REST answer is one its operation declares (the contract's shared 503); the stream's is in asyncapi.yaml.
    const requests: [string, () => Promise<Response>, ('getOrder' | 'listOrders' | 'createOrder' | 'patchOrder' | 'cancelOrder')?][] = [
      ['GET order', () => target.fetch(`/orders/${id}`), 'getOrder'],
      ['GET collection', () => target.fetch('/orders'), 'listOrders'],
      ['POST order', () => target.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }), 'createOrder'],
      ['PATCH order', () => patch(id, 'during'), 'patchOrder'],
      ['cancel', () => target.fetch(`/orders/${id}/cancel`, { method: 'POST', headers: { 'if-match': '*' } }), 'cancelOrder'],
      ['SSE stream', () => target.fetch(`/api/orders/${id}/stream`, { headers: { accept: 'text/event-stream' } })],
    ];
    for (const [name, send, operationId] of requests) {
      const res = await send();
      if (operationId) await expectContract(operationId, res.clone());
      const body = await res.text();
      expect({ name, status: res.status }).toEqual({ name, status: 503 });
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(body)).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
      expect(body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/i); // nothing internal
    }
    // GraphQL alike: 503 with Retry-After, one error coded UNAVAILABLE, no partial data, nothing internal.
    const gql = await target.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: `{ order(id: "${id}") { id note } viewer { name } }` }),
    });
    const gqlBody = await gql.text();
    expect(gql.status).toBe(503);
    expect(Number(gql.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(gqlBody)).toEqual({ errors: [expect.objectContaining({ extensions: { code: 'UNAVAILABLE' } })] });
    expect(gqlBody).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/i);
    // A subscribe on the connection held open: an `unavailable` error (try again later), the connection stays.
    ws.send({ type: 'subscribe', channel: `order:${other.id}` });
    await ws.until((m) => m.some((x) => x.type === 'error' && x.code === 'unavailable'));
    const upgrade = await openWs(target);
    expect(upgrade).toMatchObject({ status: 503, headers: { 'retry-after': expect.stringMatching(/^[1-9]\d*$/) } });
    const ready = await target.fetch('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBeTruthy();
    expect(await ready.json()).toMatchObject({ checks: { store: false, bus: true } });
    // The store tells its onError of each (main.ts counts them in orderline_store_errors_total and logs them).
    expect(storeErrors.some((e) => e.name === 'StoreUnavailableError')).toBe(true);

    await pg.start();

    // The same server, no restart: the first request after may still meet a connection the stop broke; none is a 500.
    const after = await patch(id, 'after');
    expect(after.status).toBe(200);
    acknowledged.set(id, 'after');
    expect((await target.fetch('/readyz')).status).toBe(200);
    const read = await target.fetch(`/orders/${id}`);
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ note: acknowledged.get(id) });
    const revisions = (await store.eventsAfter(id, 0, 100)).map((e) => e.seq);
    expect(revisions).toEqual([1, 2, 3, 4, 5]); // the create, three writes before, one after: none lost, none extra
    ws.send({ type: 'subscribe', channel: `order:${other.id}` }); // the same subscribe again, now served
    await ws.until((m) => m.some((x) => x.type === 'subscribed' && x.channel === `order:${other.id}`));
    // The stream held open through the outage gets the write made after it.
    await ws.until((m) => m.some((x) => x.type === 'order.updated' && x.seq === 5));
    ws.ws.close();
    const sse = await openSse(target, id, { 'last-event-id': '3' });
    expect(sse.res.status).toBe(200);
    const events = await sse.reader!.take(3);
    expect(events.map((e) => e.id)).toEqual(['3', '4', '5']); // subscribed at 3, then 4 and 5 replayed
    sse.close();
  });
});
