/**
 * WebSocket liveness (src/realtime/heartbeat.ts): each round pings every open connection
 * and cuts the ones that left the previous ping unanswered, on /orders and on /graphql
 * alike. A client gone without a FIN looks like one that does not answer pings: the `ws`
 * client with `autoPong: false`. Rounds are run by hand (WS_HEARTBEAT_S=0: no timer).
 */
import { once } from 'node:events';
import { WebSocket } from 'ws';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, touch, WsClient } from '../support/streams';
import { GRAPHQL_WS, ORDER_EVENTS } from '../support/graphqlWs';

let srv: TestServer;
beforeEach(async () => {
  srv = await startTestServer({ WS_HEARTBEAT_S: '0' });
});
afterEach(() => srv.close());

async function open(path: '/orders' | '/graphql', autoPong: boolean): Promise<WsClient> {
  const ws = new WebSocket(`${srv.url.replace('http', 'ws')}${path}`, path === '/graphql' ? [GRAPHQL_WS] : [], { headers: { authorization: `Bearer ${srv.alice.token}` }, autoPong });
  const c = new WsClient(ws);
  await once(ws, 'open');
  return c;
}

/** Subscribes to the order on the connection's protocol and waits for the acknowledgement. */
async function subscribe(c: WsClient, path: '/orders' | '/graphql', id: number): Promise<void> {
  if (path === '/orders') {
    c.send({ type: 'subscribe', channel: `order:${id}` });
    await c.until((m) => m.some((x) => x.type === 'subscribed'));
  } else {
    c.send({ type: 'connection_init' });
    await c.until((m) => m.some((x) => x.type === 'connection_ack'));
    c.send({ id: '1', type: 'subscribe', payload: { query: ORDER_EVENTS, variables: { id: String(id) } } });
    await c.until((m) => m.some((x) => x.type === 'next'));
  }
}

const timeouts = async () => Number(/orderline_ws_heartbeat_timeouts_total (\d+)/.exec(await srv.scrape())?.[1]);

describe('WebSocket heartbeat', () => {
  it('cuts the connections that left a ping unanswered, on /orders and /graphql, and keeps the ones that answered', async () => {
    const { id } = await createOrder(srv);
    const paths = ['/orders', '/graphql'] as const;
    const alive = await Promise.all(paths.map((p) => open(p, true)));
    const silent = await Promise.all(paths.map((p) => open(p, false)));
    await Promise.all(paths.map((p, i) => Promise.all([subscribe(alive[i], p, id), subscribe(silent[i], p, id)])));
    expect(srv.realtime.stats().ws).toBe(4);

    const pinged = [...alive, ...silent].map((c) => once(c.ws, 'ping'));
    srv.realtime.wsHeartbeat.beat();
    await Promise.all(pinged);
    // The answering clients' pongs left before this message; the server reads a connection in order.
    alive[0].send({ type: 'subscribe', channel: `order:${id}` });
    await alive[0].until((m) => m.some((x) => x.type === 'error' && x.code === 'already_subscribed'));
    alive[1].send({ id: '1', type: 'subscribe', payload: { query: ORDER_EVENTS, variables: { id: String(id) } } });
    await alive[1].closed(); // graphql-transport-ws: a repeated id closes 4409; its pong was read before that
    expect(alive[1].closeCode).toBe(4409);

    srv.realtime.wsHeartbeat.beat();
    expect(await Promise.all(silent.map((c) => c.closed()))).toEqual([1006, 1006]); // cut, no close frame
    expect(await timeouts()).toBe(2);
    expect(alive[0].closeCode).toBeUndefined();
    // The one that answered still gets its events.
    await touch(srv, id, 1);
    await alive[0].until((m) => m.some((x) => x.type === 'orderUpdated' || (typeof x.seq === 'number' && x.seq >= 2)));
    srv.realtime.wsHeartbeat.beat(); // and keeps answering
    await once(alive[0].ws, 'ping');
    expect(srv.realtime.stats().ws).toBe(1);
    alive[0].ws.close();
  });

  it('a client that answers every ping is never cut, however many rounds pass', async () => {
    const c = await open('/orders', true);
    for (let round = 0; round < 5; round++) {
      const pinged = once(c.ws, 'ping');
      srv.realtime.wsHeartbeat.beat();
      await pinged;
      c.send('{}'); // an invalid message, answered: the pong before it was read
      await c.until((m) => m.filter((x) => x.type === 'error').length === round + 1);
    }
    expect(c.closeCode).toBeUndefined();
    expect(await timeouts()).toBe(0);
    c.ws.close();
  });
});
