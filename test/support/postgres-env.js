// jest setupFiles for the `postgres` project: the scaled-out deployment's engines. The test
// servers open PostgresStore and the Redis bus and APQ registry (test/support/server.ts).
process.env.TEST_STORE = 'postgres';
process.env.TEST_BUS = 'redis';
