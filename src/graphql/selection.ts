/**
 * Helpers the validation rules share: which fields are exempt, and how big a list
 * field is asked to be. Kept apart so the depth, cost and `first` rules agree.
 */
import { Kind, type FieldNode, type OperationDefinitionNode, type ValueNode } from 'graphql';

/** Raw variables as the client sent them (validation runs before coercion). */
export type RawVariables = Readonly<Record<string, unknown>> | null | undefined;

/**
 * `__schema` and `__type` are exempt from depth and cost outside production (codegen
 * and GraphiQL introspect deeply), where introspectionRule.ts bounds them instead; in
 * production introspection is refused by its own rule.
 */
export const isIntrospectionRoot = (name: string): boolean => name === '__schema' || name === '__type';

/** The default value of a variable in the operation that declares it, when it is an integer literal. */
function variableDefault(op: OperationDefinitionNode | null, name: string): number | undefined {
  const def = op?.variableDefinitions?.find((v) => v.variable.name.value === name);
  return def?.defaultValue?.kind === Kind.INT ? Number(def.defaultValue.value) : undefined;
}

/**
 * The value of a field's `first` argument: from the literal, else the variable sent,
 * else the variable's default; undefined when absent or not an integer (then the list
 * factor applies, and execution rejects a mistyped variable anyway).
 */
export function firstArgument(field: FieldNode, variables: RawVariables, op: OperationDefinitionNode | null): { value: number | undefined; node: ValueNode | undefined } {
  const arg = field.arguments?.find((a) => a.name.value === 'first');
  if (!arg) return { value: undefined, node: undefined };
  const v = arg.value;
  if (v.kind === Kind.INT) return { value: Number(v.value), node: v };
  if (v.kind === Kind.VARIABLE) {
    const name = v.name.value;
    const sent = variables && Object.prototype.hasOwnProperty.call(variables, name) ? variables[name] : undefined;
    if (typeof sent === 'number' && Number.isInteger(sent)) return { value: sent, node: v };
    if (sent === undefined) return { value: variableDefault(op, name), node: v };
  }
  return { value: undefined, node: v };
}
