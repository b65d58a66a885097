/**
 * What bounds introspection outside production, where it is on (GraphiQL, codegen and
 * client tools read the schema from the endpoint) and exempt from depth and cost (its
 * standard query nests `ofType` seven deep and `types { fields { args } }` three lists deep,
 * which the limits meant for the data graph would refuse). Without a bound, aliases repeat
 * it: seventy aliased copies of `__schema { types { fields { args } } }` fit in the token
 * limit and answer 850 KB, holding the process for a quarter of a second each.
 *
 * Two rules, after which the answer is at most one or two readings of the schema:
 * - an operation selects at most MAX_INTROSPECTION_ROOTS introspection root fields
 *   (`__schema`, `__type`), counted by response key (`__schema` twice is one field);
 * - no field inside them is aliased to another name, so nothing below a root is asked
 *   twice (graphql-js merges fields of one name; its MaxIntrospectionDepthRule bounds how
 *   deep `fields`, `interfaces`, `possibleTypes` and `inputFields` nest).
 * Every standard introspection query (graphql-js's `getIntrospectionQuery`, GraphiQL's,
 * graphql-codegen's, Apollo's) selects one `__schema` and aliases nothing. In production
 * introspection is refused altogether (NoSchemaIntrospectionCustomRule).
 */
import { Kind, type ASTVisitor, type FieldNode, type SelectionSetNode, type ValidationContext, type ValidationRule } from 'graphql';
import { validationError } from './errors';
import { fragmentMeasure } from './fragmentWalk';
import { isIntrospectionRoot } from './selection';

/** `__schema` and a `__type`, or two `__type`s: what a tool asks in one operation. */
export const MAX_INTROSPECTION_ROOTS = 2;

export const introspectionRule: ValidationRule = (context: ValidationContext): ASTVisitor => {
  // The first field aliased to another name in a fragment, measured once per document however often it is spread.
  const aliasIn = fragmentMeasure<FieldNode | undefined>(
    (name) => context.getFragment(name),
    (fragment) => firstAlias(fragment.selectionSet),
    undefined,
  );

  function firstAlias(set: SelectionSetNode): FieldNode | undefined {
    for (const sel of set.selections) {
      const found =
        sel.kind === Kind.FIELD
          ? sel.alias !== undefined && sel.alias.value !== sel.name.value
            ? sel
            : sel.selectionSet && firstAlias(sel.selectionSet)
          : sel.kind === Kind.INLINE_FRAGMENT
            ? firstAlias(sel.selectionSet)
            : aliasIn(sel.name.value);
      if (found) return found;
    }
    return undefined;
  }

  return {
    OperationDefinition(op) {
      // The introspection root fields at the operation's top level, through its fragments (each walked once: cycles and repeats end there).
      const roots = new Map<string, FieldNode>();
      const walked = new Set<string>();
      const reported = new Set<FieldNode>();
      const collect = (set: SelectionSetNode): void => {
        for (const sel of set.selections) {
          if (sel.kind === Kind.FIELD) {
            if (!isIntrospectionRoot(sel.name.value)) continue;
            roots.set(sel.alias?.value ?? sel.name.value, sel);
            const aliased = sel.selectionSet && firstAlias(sel.selectionSet);
            if (aliased && !reported.has(aliased)) {
              reported.add(aliased);
              context.reportError(validationError(`Introspection fields may not be aliased (${aliased.alias?.value ?? ''}: ${aliased.name.value}): each is answered once`, aliased));
            }
          } else if (sel.kind === Kind.INLINE_FRAGMENT) {
            collect(sel.selectionSet);
          } else if (!walked.has(sel.name.value)) {
            walked.add(sel.name.value);
            const fragment = context.getFragment(sel.name.value);
            if (fragment) collect(fragment.selectionSet);
          }
        }
      };
      collect(op.selectionSet);
      if (roots.size > MAX_INTROSPECTION_ROOTS) {
        const name = op.name ? `'${op.name.value}'` : 'The operation';
        context.reportError(validationError(`${name} selects ${roots.size} introspection fields (__schema, __type): at most ${MAX_INTROSPECTION_ROOTS} per operation`, op));
      }
      return false; // fragments are walked from their spreads
    },
  };
};
