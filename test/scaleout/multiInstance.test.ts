/**
 * Two server processes on different ports sharing one PostgreSQL schema and one Redis
 * (the scale-out acceptance): fan-out across instances, resume on another instance after
 * SIGKILL without resync, the APQ registry shared, one winner among concurrent
 * same-If-Match writes on both, and a Redis restart mid-stream.
 */
import { createOrder, openSse, openWs, WsClient, type StreamTarget } from '../support/streams';
import { PG_URL, pgSchema, sleep, startInstance, startRedis, type Instance } from '../support/instances';
import { sha256Hex } from '../../src/graphql';
import { connectGraphqlWs, eventsOf, subscribe as subscribeGraphql } from '../support/graphqlWs';

jest.setTimeout(90_000);

let redis: Awaited<ReturnType<typeof startRedis>>;
let db: ReturnType<typeof pgSchema>;
let a: Instance;
let b: Instance;

beforeAll(async () => {
  redis = await startRedis();
  db = pgSchema();
  const env = { DATABASE_URL: PG_URL, DATABASE_SCHEMA: db.schema, REDIS_URL: redis.url, REDIS_PREFIX: 'mi:' };
  a = await startInstance(env); // migrates and seeds first
  b = await startInstance(env);
});

afterAll(async () => {
  await Promise.all([a, b].filter(Boolean).map((i) => i.kill('SIGTERM')));
  await redis?.kill();
  await db?.drop();
});

async function ws(srv: StreamTarget, query = ''): Promise<WsClient> {
  const c = await openWs(srv, query);
  if (!(c instanceof WsClient)) throw new Error(`upgrade refused: ${c.status}`);
  return c;
}

async function patch(srv: StreamTarget, id: number, note: string, ifMatch = '*'): Promise<Response> {
  return srv.fetch(`/orders/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json', 'if-match': ifMatch }, body: JSON.stringify({ note }) });
}

const seqsOf = (msgs: Record<string, unknown>[], channel: string) => msgs.filter((m) => m.channel === channel && typeof m.type === 'string' && m.type.startsWith('order.')).map((m) => m.seq as number);

describe('two instances sharing PostgreSQL and Redis', () => {
  it('streams a write accepted by A to subscribers on B (WebSocket and SSE)', async () => {
    const { id } = await createOrder(a);
    const sub = await ws(b);
    sub.send({ type: 'subscribe', channel: `order:${id}` });
    await sub.until((m) => m.some((x) => x.type === 'subscribed'));
    const sse = await openSse(b, id);
    expect(sse.res.status).toBe(200);
    expect((await patch(a, id, 'from A')).status).toBe(200);
    await sub.until((m) => seqsOf(m, `order:${id}`).includes(2));
    const [subscribed, ev] = await sse.reader!.take(2);
    expect(subscribed).toMatchObject({ id: '1', event: 'subscribed' });
    expect(ev).toMatchObject({ id: '2', event: 'order.updated' });
    expect(JSON.parse(ev.data!)).toMatchObject({ seq: 2, order: { note: 'from A' } });
    sub.ws.close();
    sse.close();
  });

  it('GraphQL subscriptions: a write on A reaches a subscriber on B; a client resuming on A with since gets the missed events once', async () => {
    const { id } = await createOrder(a);
    const onB = await connectGraphqlWs(b);
    subscribeGraphql(onB, '1', { id: String(id) });
    await onB.until(() => eventsOf(onB, '1').length === 1);
    expect((await patch(a, id, 'gql from A')).status).toBe(200);
    await onB.until(() => eventsOf(onB, '1').length === 2);
    expect(eventsOf(onB, '1')[1]).toMatchObject({ seq: 2, type: 'order.updated', order: { note: 'gql from A' } });
    onB.ws.terminate(); // cut; two writes on B while away
    expect((await patch(b, id, 'away 1')).status).toBe(200);
    expect((await patch(b, id, 'away 2')).status).toBe(200);
    const onA = await connectGraphqlWs(a);
    subscribeGraphql(onA, '1', { id: String(id), since: 2 });
    await onA.until(() => eventsOf(onA, '1').length === 3);
    expect((await patch(b, id, 'live')).status).toBe(200);
    await onA.until(() => eventsOf(onA, '1').length === 4);
    expect(eventsOf(onA, '1').map((e) => [e.type, e.seq, e.order?.note ?? null])).toEqual([
      ['subscribed', 2, null],
      ['order.updated', 3, 'away 1'],
      ['order.updated', 4, 'away 2'],
      ['order.updated', 5, 'live'],
    ]);
    onA.ws.close();
  });

  it('finds on B an APQ hash registered on A', async () => {
    const query = `query Viewer${Date.now()} { viewer { id } }`;
    const ext = { persistedQuery: { version: 1, sha256Hash: sha256Hex(query) } };
    const hashOnly = (srv: Instance) => srv.fetch(`/graphql?extensions=${encodeURIComponent(JSON.stringify(ext))}`, { headers: { accept: 'application/graphql-response+json' } });
    const before = (await (await hashOnly(b)).json()) as { errors?: { extensions?: { code?: string } }[] };
    expect(before.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    const reg = await a.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, extensions: ext }) });
    expect(reg.status).toBe(200);
    const after = await hashOnly(b);
    expect(after.status).toBe(200);
    expect(((await after.json()) as { data?: unknown }).data).toMatchObject({ viewer: { id: expect.any(String) } });
  });

  it('of N writes carrying the same If-Match, spread over A and B, exactly one wins', async () => {
    for (let round = 0; round < 3; round++) {
      const { id, etag } = await createOrder(a);
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => patch(i % 2 ? a : b, id, `w${i}`, etag)));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 412)).toHaveLength(11);
      const winner = results.findIndex((r) => r.status === 200);
      const res = await a.fetch(`/orders/${id}`);
      expect(res.headers.get('etag')).not.toBe(etag);
      expect(await res.json()).toMatchObject({ note: `w${winner}` });
    }
  });

  it('Redis restarted mid-stream: the subscriber on B gets every event, the one written during the outage included, with no gap', async () => {
    const { id } = await createOrder(a);
    const channel = `order:${id}`;
    const sub = await ws(b);
    sub.send({ type: 'subscribe', channel });
    await sub.until((m) => m.some((x) => x.type === 'subscribed'));
    expect((await patch(a, id, 'before')).status).toBe(200);
    await sub.until((m) => seqsOf(m, channel).includes(2));

    await redis.kill();
    // The write path does not need Redis: the event is committed with the change.
    expect((await patch(a, id, 'during the outage')).status).toBe(200);
    const ready = await a.fetch('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ checks: { bus: false, store: true } });
    // B has noticed the outage too (a condition, not a pause), so its way back is what is tested.
    for (let i = 0; i < 100 && (await b.fetch('/readyz')).status !== 503; i++) await sleep(50);
    expect((await b.fetch('/readyz')).status).toBe(503);
    await redis.start(); // empty: every subscription and message is gone

    // B's subscriber connection comes back, re-subscribes and reads the event table.
    await sub.until((m) => seqsOf(m, channel).includes(3), 15_000);
    // A's publisher is back too: live events flow again.
    let delivered = false;
    for (let i = 0; i < 50 && !delivered; i++) {
      if ((await a.fetch('/readyz')).status === 200) delivered = true;
      else await sleep(100);
    }
    expect((await patch(a, id, 'after')).status).toBe(200);
    await sub.until((m) => seqsOf(m, channel).includes(4), 10_000);
    expect(sub.messages.filter((m) => m.type === 'resync')).toEqual([]);
    expect(seqsOf(sub.messages, channel)).toEqual([2, 3, 4]);
    expect(sub.closeCode).toBeUndefined();
    sub.ws.close();
  });

  it('a client on A resumes on B after A is killed with SIGKILL: no resync, nothing lost, nothing twice', async () => {
    const { id } = await createOrder(b);
    const channel = `order:${id}`;
    const onA = await ws(a);
    onA.send({ type: 'subscribe', channel });
    await onA.until((m) => m.some((x) => x.type === 'subscribed' && x.seq === 1));
    const sseOnA = await openSse(a, id);

    // Writes keep coming through B while A dies partway.
    const TOTAL = 30;
    const writer = (async () => {
      for (let i = 0; i < TOTAL; i++) expect((await patch(b, id, `n${i}`)).status).toBe(200);
    })();
    await onA.until((m) => seqsOf(m, channel).length >= 5);
    await a.kill('SIGKILL');
    await onA.closed();
    await sseOnA.reader!.done;
    const wsSeen = seqsOf(onA.messages, channel);
    const sseSeen = sseOnA
      .reader!.all()
      .filter((e) => e.id && e.event?.startsWith('order.'))
      .map((e) => Number(e.id));

    // Resume on B from what each client holds.
    const resumed = await ws(b, `since=${wsSeen[wsSeen.length - 1]}`);
    resumed.send({ type: 'subscribe', channel });
    const sseResumed = await openSse(b, id, { 'last-event-id': String(sseSeen[sseSeen.length - 1]) });
    await writer;
    const last = 1 + TOTAL;
    await resumed.until((m) => seqsOf(m, channel).includes(last), 10_000);
    const all = Array.from({ length: TOTAL }, (_, i) => i + 2);
    expect([...wsSeen, ...seqsOf(resumed.messages, channel)]).toEqual(all);
    expect(resumed.messages.filter((m) => m.type === 'resync')).toEqual([]);
    // The resumed stream's first event is `subscribed` at the resume point, then the events after it.
    const [resumedAt, ...sseAfter] = await sseResumed.reader!.take(1 + last - sseSeen[sseSeen.length - 1], 10_000);
    expect(resumedAt).toMatchObject({ event: 'subscribed', id: String(sseSeen[sseSeen.length - 1]) });
    expect(sseAfter.filter((e) => e.event === 'resync')).toEqual([]);
    expect([...sseSeen, ...sseAfter.map((e) => Number(e.id))]).toEqual(all);
    resumed.ws.close();
    sseResumed.close();
  });
});
