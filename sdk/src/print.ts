import { print, type DocumentNode } from 'graphql';

/**
 * The exact text sent for a document: graphql-js's `print`, as the contract's
 * operations are printed. Its own module: the GraphQL client loads it with a dynamic
 * import on the first `execute()`, so an app that only runs the contract's named
 * operations never loads graphql's printer, and a bundler puts it in a chunk of its own.
 */
export function printDocument(document: DocumentNode): string {
  return print(document);
}
