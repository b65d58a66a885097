/**
 * The page sizes of the schema's list fields (`first`), one value each for the resolvers,
 * the cost rule and the `first` check, as contracts/schema.graphql documents them
 * ("default and cost estimate 10, maximum 100"); pageSize.test.ts holds them to that text.
 */

/** The list size a field serves when it names no `first`, and so the size the cost rule prices it at. */
export const DEFAULT_FIRST = 10;

/** The largest `first` a query may ask for. */
export const MAX_FIRST = 100;
