// jest setupFiles for the `postgres` project: the test servers open PostgresStore (test/support/server.ts).
process.env.TEST_STORE = 'postgres';
