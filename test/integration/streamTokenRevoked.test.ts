/**
 * A revoked token ends the streams it opened, at the next recheck (STREAM_TOKEN_RECHECK_S;
 * the test runs the round itself): an SSE stream ends, a WebSocket connection (/orders, and
 * GraphQL subscriptions on /graphql, token in the upgrade or in connection_init) closes 1008
 * "Token revoked", and each reconnect with the token is refused. Streams opened with the
 * account's other token, and other accounts', go on.
 */
import { parseToken } from '../../src/store';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, openSse, openWs, touch, WsClient } from '../support/streams';
import { connectGraphqlWs, eventsOf, openGraphqlWs, subscribe } from '../support/graphqlWs';

let srv: TestServer;
beforeEach(async () => {
  // No auth cache: a revoked token is refused at once (with it, within AUTH_CACHE_TTL_MS).
  srv = await startTestServer({ AUTH_CACHE_TTL_MS: '0', STREAM_TOKEN_RECHECK_S: '0' });
});
afterEach(() => srv.close());

const revoke = async (token: string) => {
  const parts = parseToken(token);
  if (!parts) throw new Error('not a token');
  expect(await srv.store.revokeToken(srv.alice.account.id, parts.selector)).toBe(true);
};

describe('a revoked token', () => {
  it('ends its SSE streams and closes its WebSocket connections 1008; the other token’s streams go on; reconnects are refused', async () => {
    const { id } = await createOrder(srv);
    const second = await srv.tokenFor('alice');
    const bearer = { authorization: `Bearer ${second}` };

    const sse = await openSse(srv, id, bearer);
    const keptSse = await openSse(srv, id);
    const ws = await openWs(srv, '', second);
    const keptWs = await openWs(srv);
    const gqlUpgrade = await connectGraphqlWs(srv, { headerToken: second });
    const gqlInBand = await connectGraphqlWs(srv, { headerToken: null, init: { authorization: `Bearer ${second}` } });
    // The kept token on the upgrade, the revoked one in connection_init (as behind a gateway that adds its own).
    const gqlBoth = await connectGraphqlWs(srv, { init: { authorization: `Bearer ${second}` } });
    const keptGql = await connectGraphqlWs(srv);
    if (!(ws instanceof WsClient) || !(keptWs instanceof WsClient)) throw new Error('upgrade refused');
    for (const c of [ws, keptWs]) {
      c.send({ type: 'subscribe', channel: `order:${id}` });
      await c.until((m) => m.some((x) => x.type === 'subscribed'));
    }
    for (const c of [gqlUpgrade, gqlInBand, gqlBoth, keptGql]) subscribe(c, 's', { id: String(id), since: 0 });
    for (const c of [gqlUpgrade, gqlInBand, gqlBoth, keptGql]) await c.until(() => eventsOf(c, 's').length > 0);
    await sse.reader!.take(1);
    await keptSse.reader!.take(1);

    // Nothing revoked: a round ends nothing.
    expect(await srv.realtime.tokenRecheck.recheck()).toBe(0);

    await revoke(second);
    expect(await srv.realtime.tokenRecheck.recheck()).toBe(5);

    await sse.reader!.done;
    expect(sse.reader!.ended).toBe(true);
    for (const c of [ws, gqlUpgrade, gqlInBand, gqlBoth]) {
      expect(await c.closed()).toBe(1008);
      expect(c.closeReason).toBe('Token revoked');
    }

    // The streams of the other token still get the next event.
    await touch(srv, id, 1);
    await keptSse.reader!.take(2);
    await keptWs.until((m) => m.some((x) => String(x.type).startsWith('order.')));
    await keptGql.until(() => eventsOf(keptGql, 's').length > 1);
    expect(keptSse.reader!.ended).toBe(false);
    expect([keptWs.closeCode, keptGql.closeCode]).toEqual([undefined, undefined]);

    // Reconnecting with the revoked token: 401 on every transport.
    expect((await openSse(srv, id, bearer)).res.status).toBe(401);
    expect(await openWs(srv, '', second)).toMatchObject({ status: 401 });
    expect(await openGraphqlWs(srv, { headerToken: second })).toMatchObject({ status: 401 });

    // Their holds were given back: only the kept token remains.
    expect(srv.realtime.tokenRecheck.tokens).toBe(1);
    keptSse.close();
    keptWs.ws.close();
    keptGql.ws.close();
  });
});
