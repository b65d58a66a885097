/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/codegen', '<rootDir>/scripts'],
  testMatch: ['**/*.test.ts'],
  // Transpile only: `npm run typecheck` is the type gate, so tests stay fast.
  transform: { '^.+\\.ts$': 'ts-jest' },
  testTimeout: 30000,
};
