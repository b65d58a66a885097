/**
 * Two projects: everything on the embedded SQLite store, and the integration suites
 * that go through the Store port again on PostgreSQL (TEST_STORE=postgres; the store's
 * own contract suite runs on both adapters in `src/store`).
 * @type {import('jest').Config}
 */
const base = {
  testEnvironment: 'node',
  // Transpile only: `npm run typecheck` is the type gate, so tests stay fast.
  transform: { '^.+\\.ts$': 'ts-jest' },
};

const ON_POSTGRES = ['rest', 'badInput', 'sdk', 'graphql', 'graphqlAudits', 'apollo', 'sdkGraphql', 'realtime', 'realtimeSdk'];

module.exports = {
  testTimeout: 30000, // a global option: projects cannot set it
  projects: [
    {
      ...base,
      displayName: 'sqlite',
      roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/codegen', '<rootDir>/scripts'],
      testMatch: ['**/*.test.ts'],
    },
    {
      ...base,
      displayName: 'postgres',
      roots: ['<rootDir>/test/integration'],
      testMatch: ON_POSTGRES.map((name) => `**/${name}.test.ts`),
      setupFiles: ['<rootDir>/test/support/postgres-env.js'],
    },
  ],
};
