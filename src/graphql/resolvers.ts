/**
 * Resolvers, typed by the generated `Resolvers` (contracts/schema.graphql): parents are
 * the store's records (codegen's mappers), so a field the schema adds and nothing maps
 * shows up here as a type error rather than a null at run time.
 * Access (no account reads another account's order): users, posts and comments are readable by any authenticated
 * caller; orders only by their account, through `order(id)` and `User.orders` alike.
 */
import type { Resolvers } from '../../generated/graphql/resolvers';
import type { Account, Store } from '../store';
import { parseOrderId, totalCents } from '../orders';
import type { Loaders } from './loaders';
import { DEFAULT_FIRST } from './pageSize';

// A type, not an interface: graphql-http wants a context assignable to a record.
export type GraphqlContext = {
  store: Store;
  account: Account;
  loaders: Loaders;
};

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
  User: {
    friends: (user, { first }, { loaders }) => loaders.friends.load({ id: user.id, first: first ?? DEFAULT_FIRST }),
    posts: (user, { first }, { loaders }) => loaders.posts.load({ id: user.id, first: first ?? DEFAULT_FIRST }),
    orders: (user, { first }, { loaders, account }) => (user.accountId === account.id ? loaders.orders.load({ id: account.id, first: first ?? DEFAULT_FIRST }) : []),
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
  Order: {
    id: (order) => String(order.id),
    totalCents: (order) => totalCents(order),
  },
  OrderItem: {
    unitPriceCents: (item) => item.unit_price_cents,
  },
};
