/**
 * The one way the validation rules (cost, depth) follow fragment spreads: a measure of
 * each fragment, computed once and reused at every spread. Memoized because a document
 * whose fragments spread each other k times over would otherwise cost time exponential
 * in its length to walk; guarded because a validation rule runs before (or beside)
 * graphql-js's NoFragmentCycles and KnownFragmentNames, so it must not loop or throw on
 * a cycle or an unknown name. Those rules report them; here such a spread measures
 * `none`.
 */
import type { FragmentDefinitionNode } from 'graphql';

export type FragmentLookup = (name: string) => FragmentDefinitionNode | null | undefined;

/**
 * `measure` of the named fragment, memoized for the returned function's lifetime (one
 * operation or one document: the caller decides by where it creates it). A spread of an
 * unknown fragment, or of one whose measure is still being computed (a cycle), is `none`.
 */
export function fragmentMeasure<T>(getFragment: FragmentLookup, measure: (fragment: FragmentDefinitionNode) => T, none: T): (name: string) => T {
  const memo = new Map<string, T>();
  const inProgress = new Set<string>();
  return (name) => {
    if (memo.has(name)) return memo.get(name)!;
    const fragment = getFragment(name);
    if (!fragment || inProgress.has(name)) return none;
    inProgress.add(name);
    try {
      const value = measure(fragment);
      memo.set(name, value);
      return value;
    } finally {
      inProgress.delete(name);
    }
  };
}
