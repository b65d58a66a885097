/** `main.ts` refuses bad configuration with one line naming the variable and a non-zero exit, and logs nothing else. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..');

function start(env: Record<string, string>) {
  const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', join(root, 'src/main.ts')], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: join(root, '.tmp/never'), ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, stderr: r.stderr.trim(), stdout: r.stdout };
}

describe('startup configuration errors', () => {
  it.each([
    [{ PORT: 'eighty' }, /^orderline: PORT must be an integer/],
    // A value with a line break is refused by name (and the refusal stays one line).
    [{ LOG_LEVEL: 'info\nx' }, /^orderline: LOG_LEVEL holds a control character/],
    [{ DATABASE_URL: 'postgres://user:hunter2@127.0.0.1:5432/test\nx' }, /^orderline: DATABASE_URL holds a control character/],
    [{ WORKERS: '4' }, /^orderline: WORKERS=4 needs REDIS_URL/],
    [{ DATABASE_URL: 'postgres://user:hunter2@127.0.0.1:1/nope' }, /^orderline: DATABASE_URL postgres:\/\/user:\*\*\*@127\.0\.0\.1:1\/nope is unreachable/],
    [{ REDIS_URL: 'redis://:hunter2@127.0.0.1:1' }, /^orderline: REDIS_URL redis:\/\/:\*\*\*@127\.0\.0\.1:1 is unreachable: connect ECONNREFUSED/],
    [{ WORKERS: '2', REDIS_URL: 'redis://:hunter2@127.0.0.1:1' }, /^orderline: REDIS_URL redis:\/\/:\*\*\*@127\.0\.0\.1:1 is unreachable/],
    [{ HOST: 'no-such-host.invalid', PORT: '0' }, /^orderline: HOST no-such-host\.invalid does not resolve to an address/],
    [{ HOST: '192.0.2.1', PORT: '0' }, /^orderline: HOST 192\.0\.2\.1 is not an address of this machine/],
    [{ METRICS_HOST: 'no-such-host.invalid', METRICS_TOKEN: 'a-token-of-sixteen-chars', PORT: '0', METRICS_PORT: '0' }, /^orderline: METRICS_HOST no-such-host\.invalid does not resolve to an address/],
    [{ DATA_DIR: join(root, 'package.json'), PORT: '0' }, /^orderline: DATA_DIR .*package\.json cannot hold the database/],
    // A path the kernel refuses with ENOENT under a directory that exists (procfs): once a hang in mkdir -p.
    [{ DATA_DIR: '/proc/orderline/data', PORT: '0' }, /^orderline: DATA_DIR \/proc\/orderline\/data cannot hold the database: ENOENT/],
  ])(
    '%j exits 2 with one line',
    (env, message) => {
      const r = start(env);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.split('\n')).toHaveLength(1);
      // The refusal is the whole story: no log line before it (a warning with the driver's stack trace said the same at length).
      expect(r.stdout).toBe('');
      expect(r.stderr).not.toContain('hunter2');
    },
    40_000,
  );
});
