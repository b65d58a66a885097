/**
 * Three projects: everything on the embedded deployment (SQLite, in-process bus); the
 * integration suites again on the scaled-out engines (TEST_STORE=postgres, TEST_BUS=redis;
 * the store's and the bus's own contract suites run on every adapter in `src/`); and the
 * multi-process tests (`test/scaleout`: instances and node:cluster workers).
 *
 * Before jest starts, test/support/engines.js decides which real engines this run has
 * (PostgreSQL, Redis, Chromium): suites that cannot run are left out and listed at the end
 * with the command that enables them; with CI=true a missing engine fails the run instead.
 */
const { PLAN_ENV, resolvePlan, exclusions, notRunBlock } = require('./test/support/engines');

const base = {
  testEnvironment: 'node',
  // Transpile only: `npm run typecheck` is the type gate, so tests stay fast.
  transform: { '^.+\\.ts$': 'ts-jest' },
  // The SDK workspace from its source (no build needed to test it); its relative imports
  // carry `.js` for its ESM build, which map back to the .ts files here.
  moduleNameMapper: {
    '^@orderline/sdk$': '<rootDir>/sdk/src/index.ts',
    '^@orderline/sdk/(rest|graphql|realtime)$': '<rootDir>/sdk/src/$1.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
};

const ON_POSTGRES = [
  'rest',
  'idempotency',
  'costBudget',
  'badInput',
  'sdk',
  'graphql',
  'graphqlAudits',
  'apollo',
  'sdkGraphql',
  'realtime',
  'realtimeSdk',
  'realtimeModel',
  'contractFuzz',
  'graphqlFuzz',
  'wsFuzz',
  'metrics',
  'graphqlSubscriptions',
  'graphqlSubscriptionClients',
  'sdkSubscriptions',
  'pipelined',
];

/** @returns {Promise<import('jest').Config>} */
module.exports = async () => {
  // Resolved once: jest may load this file again in the same process (it must not re-probe).
  const plan = process.env[PLAN_ENV] ? JSON.parse(process.env[PLAN_ENV]) : await resolvePlan();
  process.env[PLAN_ENV] = JSON.stringify(plan);
  const { ignore, dropProjects, notRun } = exclusions(plan);
  if (plan.ci && notRun.length > 0) {
    throw new Error(`CI=true: nothing may be skipped, and this machine lacks engines.\n${notRunBlock(plan, notRun)}\n`);
  }
  const projects = [
    {
      ...base,
      displayName: 'sqlite',
      roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/codegen', '<rootDir>/scripts', '<rootDir>/sdk/src', '<rootDir>/bench'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/scaleout/', ...ignore.sqlite.map((p) => `<rootDir>/${p}`)],
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
  ].filter((p) => !dropProjects.includes(p.displayName));
  return {
    testTimeout: 30000, // a global option: projects cannot set it
    globalSetup: '<rootDir>/test/support/engines-setup.js',
    globalTeardown: '<rootDir>/test/support/engines-teardown.js',
    reporters: ['default', ['<rootDir>/test/support/engines-reporter.js', { plan, notRun }]],
    projects,
  };
};
