/** The executable schema: the contract's SDL (generated) bound to the typed resolvers. */
import { makeExecutableSchema } from '@graphql-tools/schema';
import { isScalarType, type GraphQLSchema } from 'graphql';
import { typeDefs } from '../../generated/graphql/schema';
import { resolvers } from './resolvers';

export function createSchema(): GraphQLSchema {
  const schema = makeExecutableSchema({ typeDefs, resolvers });
  // A custom scalar's description is the contract's (what introspection and the SDL both show):
  // makeExecutableSchema takes the resolver's GraphQLScalarType whole, and scalars.ts states none.
  for (const type of Object.values(schema.getTypeMap())) {
    if (isScalarType(type) && type.astNode?.description) type.description = type.astNode.description.value;
  }
  return schema;
}
