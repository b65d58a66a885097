// @ts-check
import { defineConfig } from 'eslint/config';
import eslint from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['**/generated/**', '**/dist/**', 'sdk/docs/**', '**/node_modules/**', '.tmp/**', 'coverage/**', 'test-artifacts/**', 'data/**'] },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      // Each file is typed by its nearest tsconfig.json: sdk/src by sdk/tsconfig.json (the SDK's strict client flags), the rest by the root one.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Synchronous adapters (SQLite, in-memory bus/buckets/registry, test doubles) implement Promise-returning ports with `async` on purpose: a throw becomes a rejection.
      '@typescript-eslint/require-await': 'off',
      // `const { key: _unused, ...rest } = obj` is how the code drops a key from a copy.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  {
    // Tests (and the compat gate's mutation corpus, used only by its tests) read parsed JSON/YAML bodies and use jest's asymmetric matchers (`expect.any()` is typed any): a wrong path fails the test, casts would add nothing.
    files: ['**/*.test.ts', '**/*.contract.ts', 'test/**', 'scripts/compat/mutations.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Plain JavaScript (jest config, test engine probes, build scripts) and the SDK consumer sample (typed by its own throwaway project): syntax rules only.
    files: ['**/*.js', '**/*.mjs', 'sdk/test/**'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    // CommonJS files load their dependencies with require().
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
