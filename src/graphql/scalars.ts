/**
 * The schema's custom scalars (contracts/schema.graphql). Written here: `SafeInt` is a few
 * lines over graphql-js's GraphQLScalarType, where a package of scalars would bring dozens
 * we do not use.
 */
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

const notSafe = (value: unknown) => `SafeInt cannot represent ${typeof value === 'number' || typeof value === 'string' ? String(value) : typeof value}: an integer from -(2^53 - 1) to 2^53 - 1 is expected`;

/** An integer within ±(2^53 - 1), a JSON number on the wire (GraphQL's Int stops at 2^31 - 1). Its description is the contract's (schema.graphql), which the schema keeps: none here to override it. */
export const SafeInt = new GraphQLScalarType<number, number>({
  name: 'SafeInt',
  serialize(value) {
    if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
    throw new GraphQLError(notSafe(value));
  },
  parseValue(value) {
    if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
    throw new GraphQLError(notSafe(value));
  },
  parseLiteral(ast) {
    const value = ast.kind === Kind.INT ? Number(ast.value) : NaN;
    if (Number.isSafeInteger(value)) return value;
    throw new GraphQLError(ast.kind === Kind.INT ? notSafe(ast.value) : 'SafeInt takes an integer literal', { nodes: ast });
  },
});
