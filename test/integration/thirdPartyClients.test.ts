/**
 * Outside-in: the `eventsource` package (the WHATWG EventSource for Node, what a user's
 * Node client picks, not ours) against the SSE route, following only the contract:
 * `access_token` in the URL, automatic reconnection with Last-Event-ID after the
 * connection is cut, every event exactly once and in order across the cuts.
 */
import { EventSource } from 'eventsource';
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, touch } from '../support/streams';

describe('the eventsource package on /api/orders/{id}/stream', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer();
  });
  // Closed here too: a failed or timed-out case must not leave a client reconnecting after the run.
  const clients = new Set<EventSource>();
  afterAll(async () => {
    for (const es of clients) es.close();
    await srv.close();
  });

  it('gets every write exactly once, in order, across connection cuts it recovers from by itself', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 3 }), async (bursts) => {
        const { id } = await createOrder(srv);
        const es = new EventSource(`${srv.url}/api/orders/${id}/stream?access_token=${srv.alice.token}`);
        clients.add(es);
        const seqs: number[] = [];
        const types = new Set<string>();
        let waiting: { n: number; resolve: () => void; reject: (err: Error) => void } | undefined;
        /** Resolves once `n` events have arrived; fails as soon as the package gives up reconnecting. */
        const received = (n: number) => new Promise<void>((resolve, reject) => (seqs.length >= n ? resolve() : (waiting = { n, resolve, reject })));
        const onEvent = (e: MessageEvent) => {
          seqs.push(Number(e.lastEventId));
          types.add(e.type);
          if (waiting && seqs.length >= waiting.n) waiting.resolve();
        };
        es.addEventListener('order.updated', onEvent);
        try {
          await new Promise<void>((resolve, reject) => {
            es.onopen = () => resolve();
            es.onerror = () => (es.readyState === EventSource.CLOSED ? reject(new Error('refused')) : undefined);
          });
          es.onerror = () => (es.readyState === EventSource.CLOSED ? waiting?.reject(new Error(`the package gave up after ${seqs.length} events`)) : undefined);
          let written = 0;
          for (const n of bursts) {
            await touch(srv, id, n);
            written += n;
            await received(written);
            // Cut every stream without a goodbye; the package reconnects (retry:) with Last-Event-ID.
            srv.realtime.dropConnections();
            await touch(srv, id, 1); // written while the client is away: the replay must bring it
            written += 1;
          }
          await received(written);
          // Revision 1 is the create, before the stream opened; every later revision exactly once.
          expect(seqs).toEqual(Array.from({ length: written }, (_, i) => i + 2));
          expect([...types]).toEqual(['order.updated']);
        } finally {
          es.close();
        }
      }),
      { numRuns: 2 },
    );
    // Each cut costs the package's reconnection delay (the stream's retry: 2 s): up to 6 cuts here.
  }, 120_000);
});
