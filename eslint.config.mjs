// @ts-check
import { defineConfig } from 'eslint/config';
import eslint from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['**/generated/**', '**/dist/**', '**/node_modules/**', '.tmp/**', 'coverage/**', 'test-artifacts/**', 'data/**'] },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      // Each file is typed by its nearest tsconfig.json: sdk/src by sdk/tsconfig.json (the SDK's strict client flags), the rest by the root one.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
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
