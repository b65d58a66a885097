/**
 * Redis (bus, shared rate-limit buckets, APQ registry) stopped under a running server:
 * writes and reads keep succeeding (the event is committed with the write; a bucket take
 * fails open; an APQ lookup is a miss), readiness names the bus, and nothing is a 5xx
 * but readiness. A redis-server of the test's own, on a free port, stopped and started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from '../support/ports';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder } from '../support/streams';

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
