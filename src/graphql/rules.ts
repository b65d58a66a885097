/**
 * The validation rules every operation passes, in one place for the server (engine.ts) and
 * for `npm run operations:import` (scripts/operations-import.ts): an operation the import
 * admits into the allowlist is one the server runs.
 */
import { NoSchemaIntrospectionCustomRule, SingleFieldSubscriptionsRule, specifiedRules, type OperationDefinitionNode, type ValidationRule } from 'graphql';
import { costRule } from './costRule';
import { depthRule } from './depthRule';
import { expansionRule } from './expansionRule';
import { firstArgumentRule } from './firstArgumentRule';
import { introspectionRule } from './introspectionRule';
import { knownOperationTypesRule } from './knownOperationTypesRule';
import type { RawVariables } from './selection';
import { subscriptionRootRule } from './subscriptionRootRule';

export interface RuleLimits {
  maxTokens: number;
  maxDepth: number;
  maxCost: number;
  /** GRAPHQL_SHOW_COST: measured values beside the limits in a refusal's `extensions`. */
  showCost?: boolean;
}

/**
/** graphql-js's rules, its single-root-field rule with the top-level @skip/@include check of its next major (subscriptionRootRule.ts). */
export const graphqlRules: readonly ValidationRule[] = specifiedRules.map((rule) => (rule === SingleFieldSubscriptionsRule ? subscriptionRootRule : rule));

/**
 * The rules that read the text alone, whose verdict is kept per text: graphql-js's own (graphqlRules), every
 * operation's root type known (knownOperationTypesRule.ts), no introspection in production and a bounded one elsewhere (introspectionRule.ts), and the size of the operation with its fragments
 * written out (bounded by the token limit: expansionRule.ts).
 */
export function documentRules(limits: RuleLimits, production: boolean): ValidationRule[] {
  return [...graphqlRules, knownOperationTypesRule, production ? NoSchemaIntrospectionCustomRule : introspectionRule, expansionRule({ maxSelections: limits.maxTokens, showCost: limits.showCost })];
}

/**
 * The rules that read the variables (cost and `first` may come from them), registered
 * together with depth so the three take one pass: the function builds them for one
 * request's variables, which belong to `selected`, the operation the request runs (the
 * document's others are judged with their own defaults); undefined: to every operation.
 */
export function variableRules(limits: RuleLimits): (variables: RawVariables, selected?: OperationDefinitionNode | null) => ValidationRule[] {
  const depth = depthRule({ maxDepth: limits.maxDepth, showCost: limits.showCost });
  return (variables, selected) => [depth, costRule({ maxCost: limits.maxCost, variables, selected, showCost: limits.showCost }), firstArgumentRule(variables, selected)];
}
