/** RedisBus against the real Redis (REDIS_TEST_URL, default the local one), each test under its own prefix. */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import type Redis from 'ioredis';
import { DeploymentClashError, RedisBus, WATCH_WAIT_MS, connectRedis } from './redis';
import { busEvent, listener, runBusContract } from './bus.contract';

const URL = process.env.REDIS_TEST_URL || 'redis://127.0.0.1:6379';
/** The interval of a poll that waits for a condition (never a pause standing in for one). */
const pollEvery = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** An event as another instance of a deployment puts it on the wire, for `raw` to publish. */
const fromAnotherInstance = (e: ReturnType<typeof busEvent>) => JSON.stringify({ from: 'another instance', event: e });
const prefix = () => `orderline-test:${process.pid}:${Math.random().toString(36).slice(2)}:`;

/** A bus whose two connections the test holds, to cut them. */
async function instance(p: string, errors: unknown[] = [], dropped?: Error[]) {
  const pub = await connectRedis(URL, 'commands');
  const sub = await connectRedis(URL, 'subscriber');
  const bus = new RedisBus(pub, sub, { prefix: p, onError: (e) => errors.push(e), ...(dropped ? { onDropped: (e: Error) => dropped.push(e) } : {}) });
  await sub.subscribe(`${p}control`);
  return { bus, pub, sub, errors };
}

/**
 * A TCP proxy to Redis that can stop forwarding what clients send (a Redis that hangs: connections
 * open, no answers). `silentClose`: nor does it answer a client's close (a partition drops the FIN too).
 */
async function hangingProxy({ silentClose = false } = {}) {
  const target = new globalThis.URL(URL);
  let hung = false;
  const held: [Socket, Buffer][] = [];
  const sockets = new Set<Socket>();
  const server = createServer({ allowHalfOpen: silentClose }, (client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (d: Buffer) => (hung ? held.push([upstream, d]) : upstream.write(d)));
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hang: () => void (hung = true),
    answer: () => {
      hung = false;
      for (const [up, d] of held.splice(0)) up.write(d);
    },
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

runBusContract('RedisBus', async () => {
  const p = prefix();
  const [a, b] = await Promise.all([RedisBus.open(URL, { prefix: p }), RedisBus.open(URL, { prefix: p })]);
  return { a, b, close: async () => void (await Promise.all([a.close(), b.close()])) };
});

describe('RedisBus', () => {
  const open: RedisBus[] = [];
  let raw: Redis;
  beforeAll(async () => {
    raw = await connectRedis(URL, 'commands');
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((b) => b.close()));
  });
  afterAll(async () => {
    await raw.quit();
  });
  const track = <T extends { bus: RedisBus }>(i: T): T => (open.push(i.bus), i);

  it('brings only watched topics, and stops at unwatch', async () => {
    const p = prefix();
    const a = track(await instance(p));
    const b = track(await instance(p));
    const onB = listener(b.bus);
    await b.bus.watch(1);
    a.bus.publish(busEvent(2, 1)); // not watched by b
    a.bus.publish(busEvent(1, 1));
    await onB.until(1);
    b.bus.unwatch(1);
    // Barriers, not pauses: Redis answers one connection's commands in order, so the
    // UNSUBSCRIBE is done once this SUBSCRIBE is, and it hands out publishes in the order it
    // took them, so anything of topic 1 would arrive before the marker on topic 9.
    await b.bus.watch(9);
    a.bus.publish(busEvent(1, 2));
    a.bus.publish(busEvent(9, 1));
    await onB.until(2);
    expect(onB.events.map((e) => [e.orderId, e.seq])).toEqual([
      [1, 1],
      [9, 1],
    ]);
  });

  it('keeps deployments on one Redis apart by prefix', async () => {
    const a = track(await instance(prefix()));
    const otherPrefix = prefix();
    const other = track(await instance(otherPrefix));
    const onOther = listener(other.bus);
    await other.bus.watch(1);
    a.bus.publish(busEvent(1, 1));
    // A barrier, not a pause: once a's connection answers a PING its PUBLISH was taken, and
    // a marker in other's own deployment, taken after it, would arrive after a leak.
    await a.pub.ping();
    await raw.publish(`${otherPrefix}order:1`, fromAnotherInstance(busEvent(1, 2)));
    expect((await onOther.until(1)).map((e) => e.seq)).toEqual([2]);
  });

  it('refuses a prefix another deployment holds (DeploymentClashError); the same deployment opens it again', async () => {
    const p = prefix();
    const first = await RedisBus.open(URL, { prefix: p, deployment: 'aaaa' });
    open.push(first);
    open.push(await RedisBus.open(URL, { prefix: p, deployment: 'aaaa' })); // another instance of it
    await expect(RedisBus.open(URL, { prefix: p, deployment: 'bbbb' })).rejects.toBeInstanceOf(DeploymentClashError);
    expect(await raw.get(`${p}deployment`)).toBe('aaaa');
  });

  it('claims the prefix again while it runs: lost with a flushed Redis, it is back before another deployment takes it; a clash then is reported as a clash, not an error', async () => {
    const p = prefix();
    const errors: unknown[] = [];
    const clashes: unknown[] = [];
    const mine = await RedisBus.open(URL, { prefix: p, deployment: 'aaaa', claimEveryMs: 20, onError: (err) => errors.push(err), onClash: (err) => clashes.push(err) });
    open.push(mine);
    await raw.del(`${p}deployment`);
    const deadline = Date.now() + 5000;
    while ((await raw.get(`${p}deployment`)) !== 'aaaa' && Date.now() < deadline) await pollEvery(20);
    const theirs = await RedisBus.open(URL, { prefix: p, deployment: 'bbbb' }).then(
      (bus) => (open.push(bus), bus), // closed after the test, should it open
      (err: unknown) => err,
    );
    expect(theirs).toBeInstanceOf(DeploymentClashError);
    await raw.set(`${p}deployment`, 'bbbb'); // taken meanwhile all the same: this instance hears of it
    while (clashes.length === 0 && Date.now() < deadline + 5000) await pollEvery(20);
    expect(clashes).toEqual([expect.any(DeploymentClashError)]);
    expect(errors).toEqual([]);
  });

  it("drops another deployment's news on its channels (the prefix's claim lost with a flushed Redis), and takes its own and untagged", async () => {
    const p = prefix();
    const mine = await RedisBus.open(URL, { prefix: p, deployment: 'aaaa', claimEveryMs: 2 ** 31 - 1 }); // no claim again during the test
    open.push(mine);
    const heard = listener(mine);
    await mine.watch(1);
    await raw.del(`${p}deployment`);
    const theirs = await RedisBus.open(URL, { prefix: p, deployment: 'bbbb' });
    open.push(theirs);
    theirs.publish(busEvent(1, 1));
    const sibling = await RedisBus.open(URL, { prefix: p, deployment: 'aaaa' }).catch(() => undefined); // the claim is theirs now
    expect(sibling).toBeUndefined();
    // After theirs, in order on the channel: one of ours (tagged) and one untagged (an older release).
    await raw.publish(`${p}order:1`, JSON.stringify({ from: 'another instance', dep: 'aaaa', event: busEvent(1, 2) }));
    await raw.publish(`${p}order:1`, fromAnotherInstance(busEvent(1, 3)));
    expect((await heard.until(2)).map((e) => e.seq)).toEqual([2, 3]);
  });

  it('tells its hub to catch up once its subscriber connection is back and subscribed again, and then delivers', async () => {
    const p = prefix();
    const a = track(await instance(p));
    const b = track(await instance(p));
    const onB = listener(b.bus);
    await b.bus.watch(3);
    b.sub.disconnect(true); // a network cut: ioredis reconnects and re-subscribes
    const deadline = Date.now() + 5000;
    while (onB.catchUps === 0 && Date.now() < deadline) await pollEvery(20);
    expect(onB.catchUps).toBeGreaterThanOrEqual(1);
    a.bus.publish(busEvent(3, 1)); // published after the catch-up signal: must arrive live
    expect((await onB.until(1)).map((e) => e.seq)).toEqual([1]);
  });

  it('says when a lost connection is back (the end of an outage, for the log), and not before', async () => {
    let recovered = 0;
    const bus = await RedisBus.open(URL, { prefix: prefix(), onRecovered: () => recovered++ });
    try {
      expect(recovered).toBe(0);
      bus.commands.disconnect(true); // a network cut: ioredis reconnects
      const deadline = Date.now() + 5000;
      while (recovered === 0 && Date.now() < deadline) await pollEvery(20);
      expect(recovered).toBe(1);
    } finally {
      await bus.close();
    }
  });

  it('when a publishing connection comes back, tells its peers to catch up (they may have missed its publishes)', async () => {
    const p = prefix();
    const a = track(await instance(p));
    const b = track(await instance(p));
    const onB = listener(b.bus);
    a.pub.disconnect(true);
    a.bus.publish(busEvent(4, 1)); // fails at once: no offline queue on the command connection
    const deadline = Date.now() + 5000;
    while (onB.catchUps === 0 && Date.now() < deadline) await pollEvery(20);
    expect(onB.catchUps).toBeGreaterThanOrEqual(1);
    expect(a.errors.length).toBeGreaterThanOrEqual(1);
  });

  it('a Redis that hangs makes one watch wait WATCH_WAIT_MS; the next ones start at once until it answers again', async () => {
    const proxy = await hangingProxy();
    const p = prefix();
    const pub = await connectRedis(URL, 'commands');
    const sub = await connectRedis(proxy.url, 'subscriber');
    const bus = new RedisBus(pub, sub, { prefix: p });
    open.push(bus);
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'setInterval', 'clearInterval', 'Date', 'performance', 'hrtime'] });
    try {
      /** Whether `w` settled by the time the pending I/O and microtasks ran (no timer advanced). */
      const settledNow = (w: Promise<void>) => Promise.race([w.then(() => true), new Promise<boolean>((r) => setImmediate(() => setImmediate(() => r(false))))]);
      proxy.hang();
      const first = bus.watch(1);
      expect(await settledNow(first)).toBe(false); // waits for the SUBSCRIBE
      await jest.advanceTimersByTimeAsync(WATCH_WAIT_MS);
      await first;
      expect(await settledNow(bus.watch(2))).toBe(true); // known to hang: no wait
      proxy.answer();
      await sub.ping(); // Redis answered the held SUBSCRIBEs (they come before the PING)
      proxy.hang();
      expect(await settledNow(bus.watch(3))).toBe(false); // answering again: a watch waits once more
      proxy.answer();
    } finally {
      jest.useRealTimers();
      proxy.close();
    }
  });

  it('drops a hung connection once for all the commands that time out together, not once per command', async () => {
    const proxy = await hangingProxy({ silentClose: true });
    const redis = await connectRedis(proxy.url, 'commands');
    const disconnects = jest.spyOn(redis, 'disconnect');
    const warnings: Error[] = [];
    const onWarning = (w: Error) => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      proxy.hang();
      const results = await Promise.allSettled(Array.from({ length: 15 }, (_, i) => redis.get(`k${i}`)));
      expect(results.map((r) => r.status)).toEqual(Array(15).fill('rejected'));
      expect(disconnects).toHaveBeenCalledTimes(1);
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      redis.disconnect();
      proxy.close();
    }
  });

  it('survives a foreign message on its channels (reported, not thrown)', async () => {
    const p = prefix();
    const b = track(await instance(p));
    const onB = listener(b.bus);
    await b.bus.watch(5);
    // Not JSON, and JSON of other shapes (on an order channel and on the control channel): none may throw in ioredis' listener.
    for (const m of ['null', '1', '{"from":"x"}', '{"from":"x","event":null}', '{"from":"x","event":{"orderId":5}}']) {
      await raw.publish(`${p}order:5`, m);
      await raw.publish(`${p}control`, m);
    }
    await raw.publish(`${p}order:5`, 'not json');
    // A barrier, not a pause: a valid message published after it on the same connection arrives after it.
    await raw.publish(`${p}order:5`, fromAnotherInstance(busEvent(5, 1)));
    expect((await onB.until(1)).map((e) => e.seq)).toEqual([1]);
    expect(b.errors).toHaveLength(11);
  });

  it('tells a foreign message apart from a Redis failure (onDropped), so the log does not call Redis unreachable', async () => {
    const p = prefix();
    const dropped: Error[] = [];
    const b = track(await instance(p, [], dropped));
    const onB = listener(b.bus);
    await b.bus.watch(5);
    await raw.publish(`${p}order:5`, 'garbage');
    await raw.publish(`${p}order:5`, fromAnotherInstance(busEvent(5, 1)));
    expect((await onB.until(1)).map((e) => e.seq)).toEqual([1]);
    expect(dropped.map((e) => e.message)).toEqual([`not a message of this bus on ${p}order:5: garbage`]);
    expect(b.errors).toEqual([]);
  });
});
