/**
 * Peer for GraphQL subscriptions: GraphQL Yoga 5 behind graphql-ws's `useServer` on `ws`,
 * set up as Yoga's docs do it for graphql-transport-ws (the envelop `parse`, `validate`,
 * `contextFactory`, `execute` and `subscribe` of `yoga.getEnveloped` in graphql-ws's
 * `onSubscribe`), on the service's schema (contracts/schema.graphql) with Yoga's
 * `createPubSub` as the event source. What it lacks beside the service: a replay ring (a
 * client away loses what was published meanwhile), auth and the cost rules.
 *
 * - WebSocket on `/graphql`: `orderEvents(id)` yields every message published for
 *   `order:<id>`; graphql-ws executes the selection and encodes it per subscriber.
 * - `POST /publish?channel=order:<id>`: the body is one of the service's `order.updated`
 *   messages (realtime contract: the order in its REST v2 form), mapped once to the
 *   GraphQL view and published; answers the number of subscribers.
 * - `GET /metrics`, `GET /healthz` as every realtime peer (realtimePeer.ts).
 */
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import { createPubSub, createSchema, createYoga } from 'graphql-yoga';
import type { DocumentNode, ExecutionArgs, GraphQLError, GraphQLSchema } from 'graphql';
import { typeDefs } from '../../generated/graphql/schema';
import { realtimePeer } from './realtimePeer';

interface RestOrder {
  id: number;
  status: string;
  items: { sku: string; quantity: number; unit_price_cents: number }[];
  total_cents: number;
  currency: string;
  discount: { code: string; percent: number } | null;
  note: string | null;
  created_at: string;
  updated_at: string;
}

interface View {
  seq: number;
  type: string;
  resync: null;
  order: Record<string, unknown>;
}

const pubSub = createPubSub<{ order: [id: string, view: View] }>();
let subscribers = 0;

const schema = createSchema({
  typeDefs,
  resolvers: {
    Subscription: {
      orderEvents: {
        subscribe: (_root: unknown, { id }: { id: string }) => pubSub.subscribe('order', id),
        resolve: (view: View) => view,
      },
    },
  },
});

const yoga = createYoga({ schema, logging: false, landingPage: false, graphiql: false });

/** The service's event message to the GraphQL view: once per publish, shared by every subscriber's execution. */
function viewOf(body: string): View {
  const m = JSON.parse(body) as { type: string; seq: number; order: RestOrder };
  const o = m.order;
  return {
    seq: m.seq,
    type: m.type,
    resync: null,
    order: {
      id: String(o.id),
      status: o.status,
      items: o.items.map((i) => ({ sku: i.sku, quantity: i.quantity, unitPriceCents: i.unit_price_cents })),
      totalCents: o.total_cents,
      currency: o.currency,
      discount: o.discount,
      note: o.note,
      revision: m.seq,
      createdAt: o.created_at,
      updatedAt: o.updated_at,
    },
  };
}

const { server, listen } = realtimePeer({
  publish(channel, body) {
    pubSub.publish('order', channel.slice('order:'.length), viewOf(body));
    return subscribers;
  },
  dropAll: () => wss.clients.forEach((c) => c.terminate()),
});

const wss = new WebSocketServer({ server, path: '/graphql', perMessageDeflate: false });

interface EnvelopedRoot {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

/** What `yoga.getEnveloped` hands back, as used here (envelop types its members loosely). */
interface Enveloped extends EnvelopedRoot {
  schema: GraphQLSchema;
  contextFactory: () => unknown;
  parse: (source: string) => DocumentNode;
  validate: (schema: GraphQLSchema, document: DocumentNode) => readonly GraphQLError[];
}

useServer(
  {
    execute: (args) => (args.rootValue as EnvelopedRoot).execute(args) as never,
    subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args) as never,
    onConnect: () => void subscribers++,
    onDisconnect: () => void subscribers--,
    onSubscribe: async (ctx, _id, payload) => {
      const enveloped: Enveloped = yoga.getEnveloped({ ...ctx, req: ctx.extra.request, socket: ctx.extra.socket, params: payload });
      const { execute, subscribe, contextFactory, parse, validate } = enveloped;
      const args = {
        schema: enveloped.schema,
        operationName: payload.operationName,
        document: parse(payload.query),
        variableValues: payload.variables,
        contextValue: (await contextFactory()) as Record<string, unknown>,
        rootValue: { execute, subscribe },
      };
      const errors = validate(args.schema, args.document);
      if (errors.length) return [...errors];
      return args;
    },
  },
  wss,
);

listen();
