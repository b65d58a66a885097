/**
 * The demo data policy, on the real entry point (`src/main.ts`): the embedded default loads
 * the demo data and prints a demo token on its first start only; with DATABASE_URL nothing is
 * loaded or minted unless DEMO=1; a restart never mints another token.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';

const root = join(__dirname, '../..');
const PG_URL = process.env.DATABASE_TEST_URL || 'postgres://postgres@127.0.0.1:5432/test';
const TOKEN = /demo token \(account "demo"\): (\S+)/;

/** Starts the service, waits for its banner, stops it; resolves with the banner and, while it ran, the demo orders' count. */
function startOnce(env: Record<string, string>, useToken?: string): Promise<{ banner: string; token: string | null; orders: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', join(root, 'src/main.ts')], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += String(d)));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${err}`)));
    child.stderr.on('data', (d: Buffer) => {
      void (async () => {
        out += String(d);
        const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
        if (!url || !out.endsWith('\n\n')) return;
        child.stderr.removeAllListeners('data');
        const token = TOKEN.exec(out)?.[1] ?? null;
        let orders: number | null = null;
        const bearer = useToken ?? token;
        if (bearer) {
          const res = await fetch(`${url}/orders?limit=100`, { headers: { authorization: `Bearer ${bearer}` } });
          orders = res.status === 200 ? ((await res.json()) as { orders: unknown[] }).orders.length : -res.status;
        }
        child.removeAllListeners('exit');
        child.once('exit', () => resolve({ banner: out, token, orders }));
        child.kill('SIGTERM');
      })();
    });
  });
}

async function countIn(schema: string, table: string): Promise<number> {
  const c = new Client({ connectionString: PG_URL });
  await c.connect();
  try {
    return Number((await c.query(`SELECT count(*) AS n FROM "${schema}".${table}`)).rows[0].n);
  } finally {
    await c.end();
  }
}

describe('demo data policy', () => {
  const dirs: string[] = [];
  const schemas: string[] = [];
  afterAll(async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    const c = new Client({ connectionString: PG_URL });
    await c.connect();
    for (const s of schemas) await c.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    await c.end();
  });
  const newSchema = () => {
    const s = `orderline_demo_${randomBytes(4).toString('hex')}`;
    schemas.push(s);
    return s;
  };

  it('embedded default: demo data and a token on the first start; a restart mints none and the first token still works', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orderline-demo-'));
    dirs.push(dir);
    const first = await startOnce({ DATA_DIR: dir });
    expect(first.token).not.toBeNull();
    expect(first.orders).toBeGreaterThan(0);
    const second = await startOnce({ DATA_DIR: dir }, first.token!);
    expect(second.token).toBeNull();
    expect(second.banner).toContain('npm run token -- --account <name>');
    expect(second.orders).toBe(first.orders);
  }, 120_000);

  it('a first start refused for a port in use mints nothing: the next start prints the token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orderline-demo-'));
    dirs.push(dir);
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    try {
      const port = (taken.address() as AddressInfo).port;
      await expect(startOnce({ DATA_DIR: dir, METRICS_PORT: String(port) })).rejects.toThrow(/exited with 2: .*METRICS_PORT/s);
    } finally {
      taken.close();
    }
    const next = await startOnce({ DATA_DIR: dir });
    expect(next.token).not.toBeNull();
    expect(next.orders).toBeGreaterThan(0);
  }, 120_000);

  it('DATABASE_URL: nothing loaded, no token minted', async () => {
    const schema = newSchema();
    const r = await startOnce({ DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema });
    expect(r.token).toBeNull();
    expect(await countIn(schema, 'accounts')).toBe(0);
    expect(await countIn(schema, 'tokens')).toBe(0);
    expect(await countIn(schema, 'users')).toBe(0);
  }, 120_000);

  it('DATABASE_URL with DEMO=1: loaded and one token on the first start, none on a restart', async () => {
    const schema = newSchema();
    const env = { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema, DEMO: '1' };
    const first = await startOnce(env);
    expect(first.token).not.toBeNull();
    expect(first.orders).toBeGreaterThan(0);
    const second = await startOnce(env, first.token!);
    expect(second.token).toBeNull();
    expect(await countIn(schema, 'tokens')).toBe(1);
  }, 120_000);
});
