/**
 * Resolvers, typed by the generated `Resolvers` (contracts/schema.graphql): parents are
 * the store's records (codegen's mappers), so a field the schema adds and nothing maps
 * shows up here as a type error rather than a null at run time.
 * Access (no account reads another account's order): users, posts and comments are readable by any authenticated
 * caller; orders only by their account, through `order(id)` and `User.orders` alike.
 */
import { GraphQLError } from 'graphql';
import type { Resolvers, ResolversParentTypes } from '../../generated/graphql/resolvers';
import type { Account, Store } from '../store';
import { parseOrderId, totalCents } from '../orders';
import type { Loaders } from './loaders';
import { DEFAULT_FIRST } from './pageSize';
import { GRAPHQL_CODES } from './errors';
import { SafeInt } from './scalars';

/** What one message of an order's stream is made of (the parent of `OrderEvent`'s fields). */
export type OrderEventView = ResolversParentTypes['OrderEvent'];

/**
 * Opens an order's stream for the caller (subscriptions.ts): null when the order is
 * missing or another account's. The stream yields nothing itself: its events are written
 * to the connection as they come (one execution per event, shared by its subscribers).
 */
export type OpenOrderEvents = (orderId: number, since: number | undefined) => Promise<AsyncIterable<never> | null>;

// A type, not an interface: a context assignable to a record (ExecutionArgs' contextValue, graphql-ws's).
export type GraphqlContext = {
  store: Store;
  account: Account;
  loaders: Loaders;
  /** Present on the WebSocket route only (subscriptions.ts); over HTTP a subscription is refused before it runs. */
  orderEvents?: OpenOrderEvents;
};

const notFound = () => new GraphQLError('No such order', { extensions: { code: GRAPHQL_CODES.NOT_FOUND } });

export const resolvers: Resolvers<GraphqlContext> = {
  Query: {
    user: (_root, { id }, { loaders }) => loaders.user.load(id),
    // Only canonical integer ids name an order; anything else is simply not found.
    order: (_root, { id }, { store, account }) => {
      const orderId = parseOrderId(id);
      return orderId === null ? null : store.getOrder(account.id, orderId);
    },
    viewer: (_root, _args, { store, account }) => store.userOfAccount(account.id),
  },
  Subscription: {
    orderEvents: {
      async subscribe(_root, { id, since }, { orderEvents }) {
        if (!orderEvents) throw new GraphQLError('Subscriptions are served over WebSocket', { extensions: { code: GRAPHQL_CODES.BAD_REQUEST } });
        if (since != null && since < 0) throw new GraphQLError('since must be a non-negative integer (0: seen nothing)', { extensions: { code: GRAPHQL_CODES.BAD_USER_INPUT } });
        // Only canonical integer ids name an order; another account's order looks missing (as on REST: 404, never 403).
        const orderId = parseOrderId(id);
        const stream = orderId === null ? null : await orderEvents(orderId, since ?? undefined);
        if (!stream) throw notFound();
        return stream;
      },
      // Each event is executed with its view as the root value (subscriptions.ts).
      resolve: (view: OrderEventView) => view,
    },
  },
  User: {
    friends: (user, { first }, { loaders }) => loaders.friends.load({ id: user.id, first: first ?? DEFAULT_FIRST }),
    posts: (user, { first }, { loaders }) => loaders.posts.load({ id: user.id, first: first ?? DEFAULT_FIRST }),
    orders: (user, { first, after }, { loaders, account }) => {
      // `after` names an order as `order(id)` reads one: an order id in canonical form.
      const from = after == null ? 0 : parseOrderId(after);
      if (from === null) throw new GraphQLError('after must be an order id (the last of the previous page)', { extensions: { code: GRAPHQL_CODES.BAD_USER_INPUT } });
      return user.accountId === account.id ? loaders.orders.load({ id: account.id, first: first ?? DEFAULT_FIRST, after: from }) : [];
    },
  },
  Post: {
    comments: (post, { first }, { loaders }) => loaders.comments.load({ id: post.id, first: first ?? DEFAULT_FIRST }),
  },
  Comment: {
    author: async (comment, _args, { loaders }) => {
      const author = await loaders.user.load(comment.authorId);
      if (!author) throw new Error(`comment ${comment.id} has no author`); // a broken row, not the client's doing
      return author;
    },
  },
  SafeInt,
  Order: {
    id: (order) => String(order.id),
    totalCents: (order) => totalCents(order),
    totalCentsSafe: (order) => totalCents(order),
  },
  OrderItem: {
    unitPriceCents: (item) => item.unit_price_cents,
  },
};
