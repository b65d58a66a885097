/**
 * MAX_SUBSCRIPTIONS_PER_CONNECTION: one WebSocket connection holds at most that many
 * subscriptions at once, on `/orders` (channels) and on `/graphql` (GraphQL subscriptions);
 * one more is refused in-band and the connection stays open, and a place comes back when a
 * subscription ends.
 */
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, openWs, WsClient } from '../support/streams';
import { connectGraphqlWs, eventsOf, subscribe } from '../support/graphqlWs';

const CAP = 3;
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ MAX_SUBSCRIPTIONS_PER_CONNECTION: String(CAP) });
});
afterAll(() => srv.close());

async function wsOrders(): Promise<WsClient> {
  const c = await openWs(srv);
  if (!(c instanceof WsClient)) throw new Error(`upgrade refused: ${c.status}`);
  return c;
}

it('/orders: the subscription over the cap is an error too_many_subscriptions; an unsubscribe frees a place', async () => {
  const ids = await Promise.all(Array.from({ length: CAP + 1 }, () => createOrder(srv).then((o) => o.id)));
  const c = await wsOrders();
  for (const id of ids) c.send({ type: 'subscribe', channel: `order:${id}` });
  const answered = (id: number) => (m: Record<string, unknown>) => m.channel === `order:${id}` && (m.type === 'subscribed' || m.type === 'error');
  await c.until((ms) => ids.every((id) => ms.some(answered(id))));
  const over = c.messages.find(answered(ids[CAP]));
  expect(over).toMatchObject({ type: 'error', code: 'too_many_subscriptions', channel: `order:${ids[CAP]}` });
  expect(ids.slice(0, CAP).map((id) => c.messages.find(answered(id))?.type)).toEqual(Array(CAP).fill('subscribed'));
  c.send({ type: 'unsubscribe', channel: `order:${ids[0]}` });
  c.send({ type: 'subscribe', channel: `order:${ids[CAP]}` });
  await c.until((ms) => ms.some((m) => m.type === 'subscribed' && m.channel === `order:${ids[CAP]}`));
  c.ws.close();
});

it('/graphql: the subscription over the cap is an error TOO_MANY_SUBSCRIPTIONS; complete frees a place', async () => {
  const { id } = await createOrder(srv);
  const c = await connectGraphqlWs(srv);
  for (let i = 0; i < CAP; i++) subscribe(c, `s${i}`, { id: String(id) });
  await c.until(() => Array.from({ length: CAP }, (_, i) => eventsOf(c, `s${i}`).length).every((n) => n === 1));
  subscribe(c, 'over', { id: String(id) });
  await c.until((ms) => ms.some((m) => m.type === 'error' && m.id === 'over'));
  expect(c.messages.find((m) => m.type === 'error' && m.id === 'over')).toMatchObject({ payload: [{ extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } }] });
  c.send({ id: 's0', type: 'complete' });
  subscribe(c, 'again', { id: String(id) });
  await c.until(() => eventsOf(c, 'again').length === 1);
  c.ws.close();
});
