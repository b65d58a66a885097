/**
 * Types of graphql-ws's `graphql-ws/use/ws` entry: the package's `exports` map points
 * there (Node and tsx resolve it at run time), which the project's node10 resolution does
 * not read; the declarations sit at this path in the package.
 */
declare module 'graphql-ws/use/ws' {
  export { useServer } from 'graphql-ws/dist/use/ws';
}
