/**
 * Redis (bus, shared rate-limit buckets, APQ registry) stopped under a running server:
 * writes and reads keep succeeding (the event is committed with the write; a bucket take
 * fails open; an APQ lookup is a miss), readiness names the bus, and nothing is a 5xx
 * but readiness. A redis-server of the test's own, on a free port, stopped and started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from '../support/ports';
import { RedisBus } from '../../src/bus';
import { setNote } from '../../src/store/ports/fixtures.contract';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, openSse, openWs, touch, WsClient } from '../support/streams';

async function redisOn(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (up) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error('redis-server did not start');
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

describe('Redis stopped under a running server', () => {
  let port: number;
  let redis: ChildProcess;
  let srv: TestServer;

  beforeAll(async () => {
    port = await freePort();
    redis = await redisOn(port);
    srv = await startTestServer({ REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_PREFIX: 'outage:', RATE_LIMIT_RPS: '50', RATE_LIMIT_BURST: '100' });
  });
  afterAll(async () => {
    await srv?.close();
    if (redis) await stop(redis);
  });

  it('keeps serving writes and reads (rate limit fails open), readiness names the bus, and is ready again when Redis is back', async () => {
    const { id } = await createOrder(srv);
    await stop(redis);
    for (let i = 0; i < 5; i++) {
      const w = await srv.fetch(`/orders/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json', 'if-match': '*' }, body: JSON.stringify({ note: `during ${i}` }) });
      expect(w.status).toBe(200);
      expect((await srv.fetch(`/orders/${id}`)).status).toBe(200);
    }
    const ready = await srv.fetch('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ checks: { bus: false, store: true } });

    redis = await redisOn(port);
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await srv.fetch('/readyz')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    expect((await srv.store.eventsAfter(id, 0, 100)).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

describe('a subscription to an order this instance does not watch yet, with Redis down', () => {
  it('starts at once on SSE and WebSocket (it does not wait for Redis), gets this instance’s writes, and another instance’s once Redis is back', async () => {
    const port = await freePort();
    let redis = await redisOn(port);
    const env = { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_PREFIX: 'outage-watch:' };
    const srv = await startTestServer(env);
    // Another instance on the same database and Redis: its write goes to the store, its event to the bus.
    const other = await RedisBus.open(env.REDIS_URL, { prefix: env.REDIS_PREFIX });
    try {
      const { id } = await createOrder(srv);
      await stop(redis);
      const sse = await openSse(srv, id);
      expect(sse.res.status).toBe(200);
      await sse.reader!.take(1); // subscribed
      const ws = await openWs(srv);
      if (!(ws instanceof WsClient)) throw new Error(`upgrade refused: ${ws.status}`);
      ws.send({ type: 'subscribe', channel: `order:${id}` });
      await ws.until((m) => m.some((x) => x.type === 'subscribed'));
      // This instance's write reaches both at once.
      await touch(srv, id, 1);
      await sse.reader!.take(2);
      await ws.until((m) => m.some((x) => x.seq === 2 && String(x.type).startsWith('order.')));
      // Redis back: the other instance's write (to the same database) arrives too.
      redis = await redisOn(port);
      for (let i = 0; i < 100 && (await srv.fetch('/readyz')).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
      const written = await srv.store.writeOrder(srv.alice.account.id, id, setNote('from another instance'));
      if (!written.ok) throw new Error('not written');
      other.publish(written.event);
      await ws.until((m) => m.some((x) => x.seq === 3 && String(x.type).startsWith('order.')), 15_000);
      await sse.reader!.take(3, 15_000);
      sse.close();
      ws.ws.close();
    } finally {
      await other.close();
      await srv.close();
      await stop(redis);
    }
  });
});
