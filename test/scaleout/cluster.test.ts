/**
 * `WORKERS=2` under node:cluster, on each store: the workers share the port and hear
 * each other's writes through Redis; a worker that dies is replaced while the other
 * keeps its clients; SIGTERM drains every worker (WebSocket 1001) and exits 0, or 1 when
 * a worker had to be forced out of its drain.
 */
import { connect } from 'node:net';
import { createOrder, openWs, WsClient, type StreamTarget } from '../support/streams';
import { hasExited, PG_URL, pgSchema, sleep, startInstance, startRedis, workersOf } from '../support/instances';

jest.setTimeout(90_000);

async function ws(srv: StreamTarget): Promise<WsClient> {
  const c = await openWs(srv);
  if (!(c instanceof WsClient)) throw new Error(`upgrade refused: ${c.status}`);
  return c;
}

const patch = (srv: StreamTarget, id: number, note: string) =>
  srv.fetch(`/orders/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json', 'if-match': '*' }, body: JSON.stringify({ note }) });

describe.each(['sqlite', 'postgres'] as const)('WORKERS=2 on %s', (storeKind) => {
  it('spreads connections over both workers, fans out between them, replaces a dead worker, drains on SIGTERM', async () => {
    const redis = await startRedis();
    const db = pgSchema();
    const env: Record<string, string> = { WORKERS: '2', REDIS_URL: redis.url };
    if (storeKind === 'postgres') Object.assign(env, { DATABASE_URL: PG_URL, DATABASE_SCHEMA: db.schema });
    const srv = await startInstance(env);
    try {
      const primary = srv.child.pid!;
      const workers = workersOf(primary);
      expect(workers).toHaveLength(2);

      const { id } = await createOrder(srv);
      const channel = `order:${id}`;
      const subs = await Promise.all(Array.from({ length: 6 }, () => ws(srv)));
      for (const s of subs) s.send({ type: 'subscribe', channel });
      await Promise.all(subs.map((s) => s.until((m) => m.some((x) => x.type === 'subscribed'))));
      for (let i = 0; i < 3; i++) expect((await patch(srv, id, `n${i}`)).status).toBe(200);
      // Whichever worker took each write, every subscriber on either worker gets all of them.
      for (const s of subs) await s.until((m) => m.filter((x) => x.channel === channel && x.seq === 4).length === 1);

      // Kill one worker: the clients it held are cut, the others are not.
      process.kill(workers[0], 'SIGKILL');
      for (let i = 0; i < 100 && !hasExited(workers[0]); i++) await sleep(50);
      expect(hasExited(workers[0])).toBe(true);
      // The primary forks a replacement (by then this process has also seen the dead worker's
      // sockets close, so the write below cannot go out on a kept-alive one of them).
      let now: number[] = [];
      for (let i = 0; i < 50 && now.length < 2; i++) {
        await sleep(100);
        now = workersOf(primary);
      }
      expect(now).toHaveLength(2);
      expect(now).not.toContain(workers[0]);
      expect((await patch(srv, id, 'after the crash')).status).toBe(200);
      // Each subscriber was either cut with the worker or gets the write made after the crash
      // (a condition, not a pause: the dead worker can deliver nothing more).
      const afterCrash = (m: Record<string, unknown>[]) => m.some((x) => x.channel === channel && x.seq === 5);
      await Promise.all(subs.map((s) => s.until((m) => s.closeCode !== undefined || afterCrash(m))));
      const cut = subs.filter((s) => s.closeCode !== undefined);
      const kept = subs.filter((s) => s.closeCode === undefined);
      expect(cut.length).toBeGreaterThanOrEqual(1); // connections were spread over both workers
      expect(kept.length).toBeGreaterThanOrEqual(1);

      // SIGTERM: every worker says goodbye (1001) and the primary exits 0.
      const code = await srv.kill('SIGTERM');
      expect(code).toBe(0);
      for (const s of kept) expect(await s.closed()).toBe(1001);
      expect(workersOf(primary)).toEqual([]);
    } finally {
      if (srv.child.exitCode === null) await srv.kill('SIGKILL');
      await redis.kill();
      await db.drop();
    }
  });
});

describe('WORKERS=2, a worker dying while Redis is down', () => {
  it('is replaced by one that waits for Redis: the instance keeps serving on the other worker, and the new one joins when Redis is back', async () => {
    const redis = await startRedis();
    const srv = await startInstance({ WORKERS: '2', REDIS_URL: redis.url, LOG_LEVEL: 'info' });
    try {
      const primary = srv.child.pid!;
      const [first, second] = workersOf(primary);
      await redis.kill();
      process.kill(first, 'SIGKILL');
      for (let i = 0; i < 100 && !hasExited(first); i++) await sleep(50);
      // The replacement cannot reach Redis: it says so and tries again (it used to exit 2, and the primary stopped the cluster).
      for (let i = 0; i < 200 && !srv.stdout.join('').includes('REDIS_URL is unreachable; trying again'); i++) await sleep(50);
      expect(srv.stdout.join('')).toContain('REDIS_URL is unreachable; trying again');
      expect(srv.child.exitCode).toBeNull();
      expect(workersOf(primary)).toContain(second);
      // The other worker serves on, Redis or not (writes go on without the bus).
      const { id } = await createOrder(srv);
      expect((await srv.fetch(`/orders/${id}`)).status).toBe(200);
      // Redis back: the replacement (the cluster's third worker) connects and listens.
      const replacement = workersOf(primary).find((pid) => pid !== second)!;
      await redis.start();
      const listened = () =>
        srv.stdout
          .join('')
          .split('\n')
          .some((line) => line.includes('"worker":3') && line.includes('"msg":"listening"'));
      for (let i = 0; i < 400 && !listened(); i++) await sleep(50);
      expect(listened()).toBe(true);
      expect(workersOf(primary).sort()).toEqual([second, replacement].sort());
      expect(srv.child.exitCode).toBeNull();
    } finally {
      if (srv.child.exitCode === null) await srv.kill('SIGKILL');
      await redis.kill();
    }
  });
  it('exits 1 when a worker had to be forced out of its drain, as one process does', async () => {
    const redis = await startRedis();
    const srv = await startInstance({ WORKERS: '2', REDIS_URL: redis.url });
    const { port } = new URL(srv.url);
    // A request whose body never completes: in flight on its worker until the drain gives up.
    const socket = connect(Number(port), '127.0.0.1');
    try {
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      const received = new Promise<void>((resolve) => socket.once('data', () => resolve()));
      socket.write(`POST /orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${srv.alice.token}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 100\r\n\r\n`);
      await received; // 100 Continue: a worker has the request
      socket.write('{"items":');
      expect(await srv.kill('SIGTERM')).toBe(1);
    } finally {
      socket.destroy();
      await redis.kill();
    }
  });
  it('kills a worker still running when the forced exit comes (a stuck event loop): none is left behind', async () => {
    const redis = await startRedis();
    const srv = await startInstance({ WORKERS: '2', REDIS_URL: redis.url });
    const [stuck] = workersOf(srv.child.pid!);
    try {
      process.kill(stuck, 'SIGSTOP'); // it can run nothing, its drain neither
      expect(await srv.kill('SIGTERM')).toBe(1);
      for (let i = 0; i < 100 && !hasExited(stuck); i++) await sleep(50);
      expect(hasExited(stuck)).toBe(true);
      const lines = srv.stdout.join('').split('\n');
      expect(lines.some((l) => l.includes(`"workers":[${stuck}]`) && l.includes('after SIGTERM: killed'))).toBe(true);
    } finally {
      if (!hasExited(stuck)) process.kill(stuck, 'SIGKILL');
      await redis.kill();
    }
  });
});

it('a worker whose primary is killed drains: a request in flight is answered, not cut', async () => {
  const redis = await startRedis();
  const srv = await startInstance({ WORKERS: '2', REDIS_URL: redis.url, LOG_LEVEL: 'info' });
  const { port } = new URL(srv.url);
  const socket = connect(Number(port), '127.0.0.1');
  try {
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    const body = JSON.stringify({ items: [{ sku: 'A', quantity: 1, unit_price_cents: 1 }] });
    socket.write(`POST /orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${srv.alice.token}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`);
    for (let i = 0; i < 200 && !received.includes('100 Continue'); i++) await sleep(25); // a worker holds the request
    srv.child.kill('SIGKILL');
    const draining = () => srv.stdout.join('').includes('"signal":"primary gone"');
    for (let i = 0; i < 400 && !draining(); i++) await sleep(25);
    expect(draining()).toBe(true);
    socket.write(body);
    for (let i = 0; i < 400 && !/HTTP\/1\.1 201 /.test(received); i++) await sleep(25);
    expect(received).toMatch(/HTTP\/1\.1 201 Created/);
  } finally {
    socket.destroy();
    await redis.kill();
  }
});
