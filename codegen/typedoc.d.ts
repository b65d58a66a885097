/**
 * TypeDoc's types for codegen/sdkDocs.ts. typedoc 0.28 publishes its declarations only
 * through package.json `exports` (`typedoc`) and `imports` (`#models`, `#utils`...), which
 * this project's `node10` module resolution does not read; these names point TypeScript at
 * the same declaration files. Types only: at run time Node resolves `typedoc` itself.
 */
declare module 'typedoc' {
  export * from 'typedoc/dist/types/index';
}
declare module '#models' {
  export * from 'typedoc/dist/types/models';
}
declare module '#utils' {
  export * from 'typedoc/dist/types/utils-common';
}
declare module '#serialization' {
  export * from 'typedoc/dist/types/serialization';
}
declare module '#node-utils' {
  export * from 'typedoc/dist/types/node-utils';
}
