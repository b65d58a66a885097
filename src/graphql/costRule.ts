/**
 * Cost ceiling as a validation rule (exact, field by field, and always on,
 * persisted operations included): a scalar or enum field costs `scalarCost` (`__typename` 0); an object
 * field `objectCost` plus its selections; a list field size x (objectCost + its
 * selections), or size x scalarCost for a list of scalars, where size is its `first`
 * argument (literal, variable or the variable's default), else the most it can hold where
 * the contract bounds it (`listSizes`: an order's `items`, 100), else `listFactor`.
 * Fragments and inline fragments are priced where they are spread; aliases count each
 * time they appear.
 *
 * Ours rather than graphql-query-complexity or graphql-armor's cost limit: both price
 * differently from the decision above (the figures 522 and 3222 come from this
 * exact formula) and armor throws by default. It is built per request because `first`
 * may come from variables, which graphql-js's validation pass does not see otherwise.
 * Each fragment is priced once per operation (fragmentWalk.ts), so a document whose
 * fragments spread each other many times costs linear time to price even though its
 * price grows exponentially; a cyclic or unknown spread prices 0 (graphql-js's own rules
 * report it).
 */
import {
  Kind,
  getNamedType,
  getNullableType,
  isLeafType,
  isListType,
  isObjectType,
  isInterfaceType,
  type ASTVisitor,
  type GraphQLNamedType,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { validationError } from './errors';
import { firstArgument, isIntrospectionRoot, type RawVariables } from './selection';
import { fragmentMeasure } from './fragmentWalk';
import { DEFAULT_FIRST } from './pageSize';

export interface CostWeights {
  scalarCost: number;
  objectCost: number;
  listFactor: number;
  /** Lists without `first` served whole, by `Type.field`: priced at the most they can hold. */
  listSizes?: Readonly<Record<string, number>>;
}

/** The most items an order holds: the contract's `maxItems` of an order's `items` (contracts/openapi.yaml; costRule.test.ts checks they agree). */
export const ORDER_ITEMS_MAX = 100;

/**
 * listFactor is the resolvers' default page size: a paged list without `first` is priced at
 * the size it is served at. `Order.items` is no page: it is served whole, up to 100 items,
 * and was priced at 10 until a client read 100 items at a tenth of their price.
 */
export const DEFAULT_WEIGHTS: CostWeights = { scalarCost: 1, objectCost: 2, listFactor: DEFAULT_FIRST, listSizes: { 'Order.items': ORDER_ITEMS_MAX } };

export interface CostRuleOptions {
  maxCost: number;
  variables?: RawVariables;
  /** The operation the variables were sent for (the others are priced with their own defaults); absent: every operation. */
  selected?: OperationDefinitionNode | null | undefined;
  /** GRAPHQL_SHOW_COST: put `cost` and `maxCost` in the error's extensions. */
  showCost?: boolean;
  weights?: CostWeights;
}

/** The simplified estimate (the same rule, without the schema): objectCost x listFactor^d for d nested list levels. */
export const simplifiedCost = (listLevels: number, w: CostWeights = DEFAULT_WEIGHTS): number => w.objectCost * w.listFactor ** listLevels;

/** The exact cost of one operation; exported for tests and for the benchmark's report. */
export function operationCost(context: Pick<ValidationContext, 'getSchema' | 'getFragment'>, op: OperationDefinitionNode, variables: RawVariables, w: CostWeights = DEFAULT_WEIGHTS): number {
  const schema = context.getSchema();
  const fragmentCost = fragmentMeasure(
    (name) => context.getFragment(name),
    (fragment) => selectionCost(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value)),
    0,
  );

  function selectionCost(set: SelectionSetNode, parent: GraphQLNamedType | undefined | null): number {
    let total = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const name = sel.name.value;
        if (name === '__typename' || isIntrospectionRoot(name)) continue;
        const def = parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[name] : undefined;
        if (!def) continue; // FieldsOnCorrectTypeRule reports unknown fields
        const named = getNamedType(def.type);
        const leaf = isLeafType(named);
        const inner = leaf ? w.scalarCost : w.objectCost + (sel.selectionSet ? selectionCost(sel.selectionSet, named) : 0);
        if (isListType(getNullableType(def.type))) {
          const first = firstArgument(sel, variables, op).value;
          // A negative `first` is refused by firstArgumentRule; priced as 0 here, never as a discount.
          const size = first === undefined ? (w.listSizes?.[`${parent?.name ?? ''}.${name}`] ?? w.listFactor) : Math.max(0, first);
          total += size * inner;
        } else {
          total += inner;
        }
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const type = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parent;
        total += selectionCost(sel.selectionSet, type);
      } else {
        total += fragmentCost(sel.name.value);
      }
    }
    return total;
  }

  return selectionCost(op.selectionSet, schema.getRootType(op.operation));
}

export function costRule({ maxCost, variables, selected, showCost = false, weights = DEFAULT_WEIGHTS }: CostRuleOptions): ValidationRule {
  return (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(op) {
      const cost = operationCost(context, op, !selected || op === selected ? variables : undefined, weights);
      if (cost > maxCost) {
        const name = op.name ? `'${op.name.value}'` : 'The operation';
        context.reportError(validationError(`${name} costs more than the cost ceiling allows`, op, showCost ? { cost, maxCost } : {}));
      }
      return false;
    },
  });
}
