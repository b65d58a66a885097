// jest setupFiles for the `postgres` project: the scaled-out deployment's engines. The test
// servers open PostgresStore and, when this run has a Redis (test/support/engines.js), the
// Redis bus and APQ registry (test/support/server.ts); without one the in-process bus, and
// the closing block of the run says so.
process.env.TEST_STORE = 'postgres';
process.env.TEST_BUS = process.env.ORDERLINE_TEST_REDIS === '' ? 'memory' : 'redis';
