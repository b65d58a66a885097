/** The contract's schema without resolvers: what the rules' unit tests validate against (tests only: not built into dist/). */
import { buildSchema, parse, validate, type GraphQLError, type ValidationRule } from 'graphql';
import { typeDefs } from '../../generated/graphql/schema';

export const contractSchema = buildSchema(typeDefs);

/** Only the given rules (not graphql-js's), so a test sees exactly what its rule reports. */
export function check(query: string, rules: ValidationRule[]): readonly GraphQLError[] {
  return validate(contractSchema, parse(query), rules);
}
