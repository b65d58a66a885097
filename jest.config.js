/**
 * Three projects: everything on the embedded deployment (SQLite, in-process bus); the
 * integration suites again on the scaled-out engines (TEST_STORE=postgres, TEST_BUS=redis;
 * the store's and the bus's own contract suites run on every adapter in `src/`); and the
 * multi-process tests (`test/scaleout`: instances and node:cluster workers).
 * @type {import('jest').Config}
 */
const base = {
  testEnvironment: 'node',
  // Transpile only: `npm run typecheck` is the type gate, so tests stay fast.
  transform: { '^.+\\.ts$': 'ts-jest' },
};

const ON_POSTGRES = ['rest', 'idempotency', 'costBudget', 'badInput', 'sdk', 'graphql', 'graphqlAudits', 'apollo', 'sdkGraphql', 'realtime', 'realtimeSdk'];

module.exports = {
  testTimeout: 30000, // a global option: projects cannot set it
  projects: [
    {
      ...base,
      displayName: 'sqlite',
      roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/codegen', '<rootDir>/scripts'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/scaleout/'],
    },
    {
      ...base,
      displayName: 'postgres',
      roots: ['<rootDir>/test/integration'],
      testMatch: ON_POSTGRES.map((name) => `**/${name}.test.ts`),
      setupFiles: ['<rootDir>/test/support/postgres-env.js'],
    },
    {
      ...base,
      // Several server processes (and a Redis of their own) sharing one PostgreSQL schema.
      displayName: 'scaleout',
      roots: ['<rootDir>/test/scaleout'],
      testMatch: ['**/*.test.ts'],
    },
  ],
};
