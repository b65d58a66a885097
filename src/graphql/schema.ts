/** The executable schema: the contract's SDL (generated) bound to the typed resolvers. */
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { typeDefs } from '../../generated/graphql/schema';
import { resolvers } from './resolvers';

export function createSchema(): GraphQLSchema {
  return makeExecutableSchema({ typeDefs, resolvers: resolvers as Parameters<typeof makeExecutableSchema>[0]['resolvers'] });
}
