/**
 * A raw graphql-transport-ws client for tests that look at the protocol's messages and
 * close codes themselves (the libraries' own clients are tested in
 * graphqlSubscriptionClients.test.ts): open /graphql with the subprotocol, init, subscribe.
 */
import WebSocket from 'ws';
import { WsClient, type StreamTarget } from './streams';

export const GRAPHQL_WS = 'graphql-transport-ws';

export const ORDER_EVENTS = `subscription OrderEvents($id: ID!, $since: Int) {
  orderEvents(id: $id, since: $since) {
    seq
    type
    resync
    order {
      id
      status
      note
      revision
    }
  }
}`;

export interface GraphqlWsOptions {
  /** Upgrade `Authorization` header token; null for none (default: Alice's). */
  headerToken?: string | null;
  /** Extra query string of the upgrade URL (e.g. `access_token=...`). */
  query?: string;
  /** Subprotocols offered (default: graphql-transport-ws). */
  protocols?: string[];
}

/** Opens /graphql; an upgrade refused answers its status and headers. */
export function openGraphqlWs(srv: StreamTarget, opts: GraphqlWsOptions = {}): Promise<WsClient | { status: number; headers: Record<string, string | string[] | undefined> }> {
  const token = opts.headerToken === undefined ? srv.alice.token : opts.headerToken;
  const url = `${srv.url.replace('http', 'ws')}/graphql${opts.query ? `?${opts.query}` : ''}`;
  const ws = new WebSocket(url, opts.protocols ?? [GRAPHQL_WS], token ? { headers: { authorization: `Bearer ${token}` } } : {});
  const client = new WsClient(ws);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    ws.once('error', reject);
  });
}

/** Opens /graphql and completes `connection_init` (payload as given); throws unless acknowledged. */
export async function connectGraphqlWs(srv: StreamTarget, opts: GraphqlWsOptions & { init?: Record<string, unknown> } = {}): Promise<WsClient> {
  const c = await openGraphqlWs(srv, opts);
  if (!(c instanceof WsClient)) throw new Error(`upgrade refused: ${c.status}`);
  c.send({ type: 'connection_init', ...(opts.init ? { payload: opts.init } : {}) });
  await c.until((m) => m.some((x) => x.type === 'connection_ack'));
  return c;
}

/** The `next` payloads of one subscription id, in arrival order. */
export const nextsOf = (c: WsClient, id: string) => c.messages.filter((m) => m.type === 'next' && m.id === id).map((m) => m.payload as { data?: { orderEvents?: OrderEventData } | null; errors?: unknown[] });

export interface OrderEventData {
  seq: number;
  type: string;
  resync: string | null;
  order: { id: string; status: string; note: string | null; revision: number } | null;
}

/** The events (data.orderEvents) of one subscription id, in arrival order. */
export const eventsOf = (c: WsClient, id: string): OrderEventData[] => nextsOf(c, id).flatMap((p) => (p.data?.orderEvents ? [p.data.orderEvents] : []));

export function subscribe(c: WsClient, id: string, variables: Record<string, unknown>, query = ORDER_EVENTS, extra: Record<string, unknown> = {}): void {
  c.send({ id, type: 'subscribe', payload: { query, variables, ...extra } });
}
