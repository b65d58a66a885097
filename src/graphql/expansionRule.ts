/**
 * The size of an operation once its fragment spreads are written out, bounded as a
 * validation rule (always on, persisted operations included).
 *
 * The token limit bounds the text, not what it stands for: fragments that each spread the
 * previous one twice (`fragment F1 on User { ... on User { ...F0 } ... on User { ...F0 } }`
 * and so on) make a 1.5 KB document of 2^21 selections. graphql-js executes such a document
 * in linear time (it collects each named fragment once per selection set), but graphql-jit,
 * which compiles a document on its second run (compiled.ts), writes every spread out: that
 * compile held the event loop for seconds (46 s at 26 levels), for every client, at a cost
 * of 0 and a depth of 1 (`__typename` costs nothing). Here each selection counts once per
 * place it ends up in (a field, an inline fragment, a spread, with everything below it),
 * each fragment measured once (fragmentWalk.ts), and an operation over `maxSelections` is
 * refused before anything runs or compiles. The limit is the token limit: written without
 * fragments, no operation the parser admits could hold more selections than it has tokens.
 * A cyclic or unknown spread counts 1 (graphql-js's NoFragmentCycles and KnownFragmentNames
 * report it).
 */
import { Kind, type ASTVisitor, type SelectionSetNode, type ValidationContext, type ValidationRule } from 'graphql';
import { validationError } from './errors';
import { fragmentMeasure } from './fragmentWalk';

export interface ExpansionRuleOptions {
  maxSelections: number;
  /** Show the measured size next to the limit in `extensions` (GRAPHQL_SHOW_COST). */
  showCost?: boolean;
}

export function expansionRule({ maxSelections, showCost = false }: ExpansionRuleOptions): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const fragmentSize = fragmentMeasure(
      (name) => context.getFragment(name),
      (fragment) => size(fragment.selectionSet),
      0,
    );

    /** The selections below a selection set with every spread written out (may exceed 2^53: only compared with the limit). */
    function size(set: SelectionSetNode): number {
      let total = 0;
      for (const sel of set.selections) {
        if (sel.kind === Kind.FRAGMENT_SPREAD) total += 1 + fragmentSize(sel.name.value);
        else total += 1 + (sel.selectionSet ? size(sel.selectionSet) : 0);
      }
      return total;
    }

    return {
      OperationDefinition(op) {
        const selections = size(op.selectionSet);
        if (selections > maxSelections) {
          const name = op.name ? `'${op.name.value}'` : 'The operation';
          context.reportError(validationError(`${name} has more selections than the limit allows once its fragments are written out`, op, showCost ? { selections, maxSelections } : {}));
        }
        return false; // fragments are walked from their spreads
      },
    };
  };
}
