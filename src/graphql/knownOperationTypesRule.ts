/**
 * Every operation of a document names a root type the schema has: graphql-js 16 has no rule
 * for it (17's `KnownOperationTypesRule`), so a document with a mutation beside a query
 * validated when the schema has no Mutation type, and the mutation's fields were never
 * checked. Judged over the whole document, as every validation rule is (whichever operation
 * a request selects).
 */
import { GraphQLError, type ValidationContext, type ASTVisitor } from 'graphql';

export function knownOperationTypesRule(context: ValidationContext): ASTVisitor {
  const schema = context.getSchema();
  return {
    OperationDefinition(node) {
      if (!schema.getRootType(node.operation)) context.reportError(new GraphQLError(`The schema defines no ${node.operation} operations`, { nodes: node }));
      return false; // nothing below an operation is this rule's
    },
  };
}
