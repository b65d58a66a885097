/**
 * The SDK's realtime client against the running server with forced drops: random
 * schedules of writes, connection drops and pauses (fast-check). Every client must see
 * every event exactly once and in order, or an explicit resync (a GET of the order)
 * covering what it missed: never a silent skip. Ring size 5, so long outages resync.
 */
import fc from 'fast-check';
import WebSocket from 'ws';
import { streamOrder, type OrderStream } from '@orderline/sdk';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, touch } from '../support/streams';

type Entry = { kind: 'event'; seq: number } | { kind: 'resync'; revision: number };

const revisionOf = async (srv: TestServer, id: number) => Number(/-(\d+)-v/.exec((await srv.fetch(`/v2/orders/${id}`)).headers.get('etag') ?? '')?.[1]);

async function waitFor(cond: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Walks the client's log: each event is the next seq, each resync at least where it stood. */
function checkLog(log: Entry[], from: number, to: number): void {
  let cur = from;
  for (const e of log) {
    if (e.kind === 'event') {
      expect(e.seq).toBe(cur + 1);
      cur = e.seq;
    } else {
      expect(e.revision).toBeGreaterThanOrEqual(cur);
      cur = e.revision;
    }
  }
  expect(cur).toBe(to);
}

/** A client that logs each event and each resync (with the seq the resync took it to). */
function start(srv: TestServer, id: number, transport: 'ws' | 'sse', log: Entry[], backoff = { baseMs: 10, capMs: 100 }, since = 1): OrderStream {
  const holder: { client?: OrderStream } = {};
  holder.client = streamOrder({
    baseUrl: srv.url,
    token: srv.alice.token,
    orderId: id,
    transport,
    since,
    WebSocket, // the ws package as it is: no cast (WebSocketLike is what ws and the DOM both satisfy)
    backoff,
    onEvent: (m) => log.push({ kind: 'event', seq: m.seq }),
    // The SDK sets lastSeq to the order's revision before calling onResync: what the resync covers.
    onResync: () => log.push({ kind: 'resync', revision: holder.client!.lastSeq }),
  });
  return holder.client;
}

describe('realtime SDK with forced drops', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({ REPLAY_RATE: '1', REPLAY_WINDOW_S: '5' });
  });
  afterAll(() => srv.close());

  it.each(['ws', 'sse'] as const)('%s: resumes after a drop with nothing missed or repeated', async (transport) => {
    const { id } = await createOrder(srv);
    const log: Entry[] = [];
    const client = start(srv, id, transport, log);
    await touch(srv, id, 2);
    await waitFor(() => client.lastSeq === 3, 5000);
    srv.realtime.dropConnections();
    await touch(srv, id, 3); // written while the client is away (within the ring)
    await waitFor(() => client.lastSeq === 6, 5000);
    client.close();
    expect(log).toEqual([2, 3, 4, 5, 6].map((seq) => ({ kind: 'event', seq })));
  });

  it.each(['ws', 'sse'] as const)('%s: live-only (no since), cut before its first event: what was written while away arrives', async (transport) => {
    const { id } = await createOrder(srv);
    const log: Entry[] = [];
    const client = streamOrder({ baseUrl: srv.url, token: srv.alice.token, orderId: id, transport, WebSocket, backoff: { baseMs: 10, capMs: 100 }, onEvent: (m) => log.push({ kind: 'event', seq: m.seq }) });
    try {
      // `subscribed` gives the live-only client its position (SSE too: its first event).
      await waitFor(() => client.lastSeq === 1, 5000);
      srv.realtime.dropConnections();
      await touch(srv, id, 1); // seq 2, while the client is away
      await waitFor(() => client.lastSeq === 2, 5000);
    } finally {
      client.close();
    }
    expect(log).toEqual([{ kind: 'event', seq: 2 }]);
  });

  it.each(['ws', 'sse'] as const)('%s: away for longer than the ring holds -> one resync by GET, then live again', async (transport) => {
    // The client comes back having seen seq 2 while the ring keeps 6..10: no race with its
    // backoff decides whether it was "away" long enough (drops are in the tests around this one).
    const { id } = await createOrder(srv);
    await touch(srv, id, 9); // seqs 2..10; the ring keeps 6..10
    const log: Entry[] = [];
    const client = start(srv, id, transport, log, undefined, 2);
    await waitFor(() => client.lastSeq === 10, 5000);
    await touch(srv, id, 1);
    await waitFor(() => client.lastSeq === 11, 5000);
    client.close();
    expect(log).toEqual([
      { kind: 'resync', revision: 10 },
      { kind: 'event', seq: 11 },
    ]);
  });

  it('random schedules of writes, drops and pauses: exactly once in order, or an explicit resync (generated)', async () => {
    const action = fc.oneof(
      fc.record({ kind: fc.constant('write' as const), n: fc.integer({ min: 1, max: 4 }) }),
      fc.record({ kind: fc.constant('drop' as const) }),
      fc.record({ kind: fc.constant('pause' as const), ms: fc.integer({ min: 0, max: 40 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('ws' as const, 'sse' as const), fc.array(action, { minLength: 1, maxLength: 12 }), async (transport, schedule) => {
        const { id } = await createOrder(srv);
        const log: Entry[] = [];
        const client = start(srv, id, transport, log);
        try {
          for (const a of schedule) {
            if (a.kind === 'write') await touch(srv, id, a.n);
            else if (a.kind === 'drop') srv.realtime.dropConnections();
            else await new Promise((r) => setTimeout(r, a.ms));
          }
          const final = await revisionOf(srv, id);
          await waitFor(() => client.lastSeq === final, 5000);
          checkLog(log, 1, final);
        } finally {
          client.close();
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});

describe('a refusal retrying cannot fix', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(() => srv.close());

  it.each(['ws', 'sse'] as const)('%s: a bad token stops the stream with a 401 to onFatal, after one attempt', async (transport) => {
    const { id } = await createOrder(srv);
    let attempts = 0;
    // Counts the connections the client opens (ws) or its requests (sse).
    class CountingWs extends WebSocket {
      constructor(url: string) {
        super(url);
        attempts++;
      }
    }
    const countingFetch: typeof fetch = (input, init) => {
      attempts++;
      return fetch(input, init);
    };
    const fatal: unknown[] = [];
    const s = streamOrder({
      baseUrl: srv.url,
      token: 'bad-token',
      orderId: id,
      transport,
      WebSocket: CountingWs,
      fetch: countingFetch,
      backoff: { baseMs: 20, capMs: 40 },
      onEvent: () => undefined,
      onFatal: (err) => fatal.push(err),
    });
    await waitFor(() => fatal.length > 0, 5000);
    await new Promise((r) => setTimeout(r, 300)); // several backoffs: no attempt follows
    expect(fatal).toEqual([expect.objectContaining({ status: 401, code: 'UNAUTHORIZED', requestId: expect.any(String) })]);
    expect(attempts).toBe(1);
    s.close();
  });
});
