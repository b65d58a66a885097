/**
 * graphql-js 16's SingleFieldSubscriptionsRule, with the check its 17th major adds first: a
 * subscription's top-level selection carries no `@skip` or `@include` (the GraphQL spec's
 * "Single Root Field": which field a subscription listens to must not depend on its
 * variables). 16 lets such a document through, or throws on it: `@skip(if: true)` on the
 * root field leaves `createSourceEventStream` no field (a TypeError, which graphql-ws answers
 * by closing the whole socket 4500), and `@include(if: $var)` makes the rule itself throw
 * ("was provided the variable ... which was not provided a runtime value", read without
 * variables). Here either is refused as invalid like any other document (400, or an `error`
 * message over WebSocket with the connection kept), with 17's message; only documents
 * without them reach 16's rule.
 */
import { getEnterLeaveForKind, GraphQLError, Kind, OperationTypeNode, SingleFieldSubscriptionsRule, type ASTVisitor, type SelectionSetNode, type ValidationContext } from 'graphql';

const CONDITIONS = new Set(['skip', 'include']);

/** Whether a selection at the operation's top level (through fragments, each once) carries @skip or @include. */
function conditionedAtTop(context: ValidationContext, set: SelectionSetNode, seen: Set<string>): boolean {
  for (const selection of set.selections) {
    if (selection.directives?.some((d) => CONDITIONS.has(d.name.value))) return true;
    if (selection.kind === Kind.INLINE_FRAGMENT && conditionedAtTop(context, selection.selectionSet, seen)) return true;
    if (selection.kind === Kind.FRAGMENT_SPREAD && !seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      const fragment = context.getFragment(selection.name.value);
      if (fragment && conditionedAtTop(context, fragment.selectionSet, seen)) return true;
    }
  }
  return false;
}

export function subscriptionRootRule(context: ValidationContext): ASTVisitor {
  const single = SingleFieldSubscriptionsRule(context);
  const { enter } = getEnterLeaveForKind(single, Kind.OPERATION_DEFINITION);
  return {
    OperationDefinition(node, key, parent, path, ancestors) {
      if (node.operation === OperationTypeNode.SUBSCRIPTION && conditionedAtTop(context, node.selectionSet, new Set())) {
        const name = node.name ? `Subscription "${node.name.value}"` : 'Anonymous Subscription';
        context.reportError(new GraphQLError(`${name} must not use \`@skip\` or \`@include\` directives in the top level selection.`, { nodes: node }));
        return;
      }
      enter?.call(single, node, key, parent, path, ancestors); // graphql-js 16's rule returns nothing
    },
  };
}
