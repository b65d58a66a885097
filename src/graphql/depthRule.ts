/**
 * Depth limit as a validation rule (always on, persisted operations included). Counted as
 * graphql-depth-limit counts it: a root field is at depth 0 and each nested selection
 * set adds one, so `user{posts{comments{author{name}}}}` (name at 4) passes a limit of
 * 4 and five nested list levels fail.
 *
 * Written here rather than taken from graphql-depth-limit because that package throws
 * on violations (a 500 here), ignores every `__` field and recurses without
 * a cycle guard (a stack overflow on fragment cycles). This one reports through the
 * validation context, measures each fragment once per document (fragmentWalk.ts: linear
 * in the document even when fragments spread each other many times), and treats a
 * cyclic or unknown spread as depth 0: graphql-js's NoFragmentCycles and
 * KnownFragmentNames rules report those.
 */
import { Kind, type ASTVisitor, type SelectionSetNode, type ValidationContext, type ValidationRule } from 'graphql';
import { validationError } from './errors';
import { isIntrospectionRoot } from './selection';
import { fragmentMeasure } from './fragmentWalk';

export interface DepthRuleOptions {
  maxDepth: number;
  /** Show the measured depth next to the limit in `extensions` (GRAPHQL_SHOW_COST). */
  showCost?: boolean;
}

export function depthRule({ maxDepth, showCost = false }: DepthRuleOptions): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const fragmentHeight = fragmentMeasure(
      (name) => context.getFragment(name),
      (fragment) => height(fragment.selectionSet),
      0,
    );

    /** The deepest field below a selection set, relative to it (a leaf field = 0). */
    function height(set: SelectionSetNode): number {
      let max = 0;
      for (const sel of set.selections) {
        if (sel.kind === Kind.FIELD) {
          if (isIntrospectionRoot(sel.name.value) || !sel.selectionSet) continue;
          max = Math.max(max, 1 + height(sel.selectionSet));
        } else if (sel.kind === Kind.INLINE_FRAGMENT) {
          max = Math.max(max, height(sel.selectionSet));
        } else {
          max = Math.max(max, fragmentHeight(sel.name.value));
        }
      }
      return max;
    }

    return {
      OperationDefinition(op) {
        const depth = height(op.selectionSet);
        if (depth > maxDepth) {
          const name = op.name ? `'${op.name.value}'` : 'The operation';
          context.reportError(validationError(`${name} is nested deeper than the depth limit`, op, showCost ? { depth, maxDepth } : {}));
        }
        return false; // fragments are walked from their spreads
      },
    };
  };
}
