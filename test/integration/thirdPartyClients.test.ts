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
  /** The running case's state, printed if the run ends without it finishing (a jest timeout says nothing else). */
  let unfinished: (() => string) | undefined;
  afterAll(async () => {
    if (unfinished) console.error(`unfinished eventsource case: ${unfinished()}`);
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
        /** What the package reported: every error event (with its status, when it has one) and each open. */
        const history: string[] = [];
        let gaveUp: Error | undefined;
        let waiting: { n: number; resolve: () => void; reject: (err: Error) => void } | undefined;
        const state = () => `${seqs.length} events (${seqs.join(',')}); package history: ${history.join(' | ')}; server ${JSON.stringify(srv.realtime.stats())}`;
        unfinished = state;
        /**
         * Resolves once `n` events have arrived; fails as soon as the package gives up
         * reconnecting, also when it gave up before this wait began (it would hang otherwise).
         */
        const received = (n: number) =>
          new Promise<void>((resolve, reject) => {
            if (gaveUp) return reject(gaveUp);
            if (seqs.length >= n) return resolve();
            waiting = { n, resolve, reject };
          });
        es.addEventListener('order.updated', (e: MessageEvent) => {
          seqs.push(Number(e.lastEventId));
          types.add(e.type);
          if (waiting && seqs.length >= waiting.n) waiting.resolve();
        });
        es.onopen = () => history.push('open');
        es.onerror = (e) => {
          const { code, message } = e as unknown as { code?: number; message?: string };
          history.push(`error ${code ?? ''} ${message ?? ''} readyState ${es.readyState}`);
          if (es.readyState === EventSource.CLOSED) {
            gaveUp = new Error(`the package gave up: ${state()}`);
            waiting?.reject(gaveUp);
          }
        };
        try {
          await new Promise<void>((resolve, reject) => {
            // The stream's first event (it comes with the response head): from here a cut resumes from its id.
            es.addEventListener('subscribed', () => resolve(), { once: true });
            es.addEventListener('error', () => (es.readyState === EventSource.CLOSED ? reject(new Error(`refused: ${state()}`)) : undefined));
          });
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
          unfinished = undefined;
        } finally {
          es.close();
        }
      }),
      // The first example cuts before any order event (the case that lost an event before the SSE subscribed event).
      { numRuns: 2, examples: [[[0, 2]]] },
    );
    // Each cut costs the package's reconnection delay (the stream's retry: 2 s): up to 8 cuts here.
  }, 150_000);
});
