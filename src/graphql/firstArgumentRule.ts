/**
 * `first` must be an integer from 0 to MAX_FIRST (the schema's documented maximum):
 * a negative size would lower a query's price, and a list larger than the maximum is
 * never served. Checked in the validation pass, literal or variable alike, so a bad
 * size is a GRAPHQL_VALIDATION_FAILED before any resolver runs.
 */
import { type ASTVisitor, type OperationDefinitionNode, type ValidationContext, type ValidationRule } from 'graphql';
import { validationError } from './errors';
import { firstArgument, type RawVariables } from './selection';
import { MAX_FIRST } from './pageSize';

export { MAX_FIRST };

/** `selected`: the operation the variables were sent for; another operation's `first` takes its own default. */
export function firstArgumentRule(variables: RawVariables, selected?: OperationDefinitionNode | null): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    let op: Parameters<typeof firstArgument>[2] = null;
    let sent = variables;
    return {
      OperationDefinition: {
        enter(node) {
          op = node;
          sent = !selected || node === selected ? variables : undefined;
        },
        leave() {
          op = null;
        },
      },
      Field(field) {
        const { value, node } = firstArgument(field, op ? sent : variables, op);
        if (value !== undefined && (value < 0 || value > MAX_FIRST)) {
          context.reportError(validationError(`'first' must be between 0 and ${MAX_FIRST}, got ${value}`, node ?? field));
        }
      },
      // Fragments are checked where defined; a variable inside one takes the sent value.
      FragmentDefinition: {
        enter() {
          op = null;
        },
      },
    };
  };
}
