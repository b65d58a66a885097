/**
 * Real processes for the multi-instance tests: `src/main.ts` servers (run with tsx, as
 * `npm run dev` does) sharing one PostgreSQL schema and one Redis, and a Redis server of
 * the test's own (so it can be killed and restarted without touching anyone else's).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer as createNetServer } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { StreamTarget } from './streams';
import { freePort } from './ports';
import { issueToken, openStore, type StoreConfig } from '../../src/store';

/** A new token for `account` (created if new) in the store `config` names (the instance migrated it). */
export async function mintToken(config: StoreConfig, account: string): Promise<string> {
  const store = await openStore(config);
  try {
    await store.migrate(); // a no-op after the instance's own: the adapter prepares its statements here
    const a = await store.ensureAccount(account);
    const { token, selector, verifierHash } = issueToken();
    await store.addToken(a.id, selector, verifierHash);
    return token;
  } finally {
    await store.close();
  }
}

const root = join(__dirname, '..', '..');
export const PG_URL = process.env.DATABASE_TEST_URL || 'postgres://postgres@127.0.0.1:5432/test';
const children = new Set<ChildProcess>();
process.once('exit', () => children.forEach((c) => c.kill('SIGKILL')));

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The primary's worker processes (by command line: tsx may also run an esbuild service child). */
export const workersOf = (pid: number): number[] => {
  try {
    return execFileSync('pgrep', ['-P', String(pid), '-f', 'src/main.ts'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when there are none
  }
};

/** Whether `pid` has exited (gone, or a zombie not yet reaped): the kernel has closed every socket it held. */
export const hasExited = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8'); // pid (comm) state ...: comm may hold anything
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
};

const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));

/** A redis-server of its own on a free port, no persistence: a restart forgets everything. */
export async function startRedis(): Promise<{ url: string; kill(): Promise<void>; start(): Promise<void>; pause(): void; resume(): void }> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const answers = () =>
    new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => s.write('PING\r\n'));
      s.once('data', (d) => (s.destroy(), resolve(String(d).startsWith('+PONG'))));
      s.once('error', () => resolve(false));
    });
  const api = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      children.add(child);
      for (let i = 0; i < 100 && !(await answers()); i++) await sleep(50);
    },
    /** SIGSTOP: the server keeps its connections and answers nothing (a hung or partitioned Redis). */
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
    async kill() {
      if (!child) return;
      child.kill('SIGCONT');
      const c = child;
      child = undefined;
      c.kill('SIGKILL');
      await exited(c);
      children.delete(c);
    },
  };
  await api.start();
  return api;
}

/** A fresh PostgreSQL schema name, and how to drop it. */
export function pgSchema(): { schema: string; drop(): Promise<void> } {
  const schema = `orderline_mi_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  return {
    schema,
    async drop() {
      const admin = new Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}

export interface Instance extends StreamTarget {
  child: ChildProcess;
  /** The operator listener's base URL (METRICS_PORT=0: any free port), from the banner. */
  metricsUrl: string;
  /** Everything the process wrote on stderr: the start banner, or a refusal at startup. */
  stderr: string[];
  /** Everything it wrote on stdout: the JSON log lines (LOG_LEVEL=warn unless `env` says otherwise). */
  stdout: string[];
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `src/main.ts` with `env` on a free port and resolves once it printed its banner, with
 * a token of the demo account minted for this instance (as `npm run token` would): only a
 * first start prints one, and several instances share one store. DEMO=1 loads the demo data
 * on PostgreSQL too, as these tests expect.
 */
export async function startInstance(env: Record<string, string>): Promise<Instance> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'orderline-mi-'));
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', join(root, 'src/main.ts')], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: String(port), METRICS_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', DEMO: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const done = exited(child).then((code) => (children.delete(child), rmSync(dataDir, { recursive: true, force: true }), code));
  const stderr: string[] = [];
  child.stderr.on('data', (d: Buffer) => stderr.push(String(d)));
  const stdout: string[] = [];
  child.stdout.on('data', (d: Buffer) => stdout.push(String(d)));
  let metricsUrl = '';
  await new Promise<void>((resolve, reject) => {
    let out = '';
    // A hang guard, not a timing check: generous, since a loaded machine starts tsx processes slowly.
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`instance did not start in 60 s: ${stderr.join('')}`))), 60_000);
    child.stderr.on('data', (d: Buffer) => {
      out += String(d);
      if (/orderline listening on /.test(out) && out.includes('\n\n')) {
        metricsUrl = /metrics \(operators only[^)]*\): (http:\/\/\S+)\/metrics/.exec(out)?.[1] ?? '';
        clearTimeout(timer);
        resolve();
      }
    });
    void done.then((code) => reject(new Error(`instance exited ${code}: ${stderr.join('')}`)));
  });
  const token = await mintToken({ dataDir, databaseUrl: env.DATABASE_URL, databaseSchema: env.DATABASE_SCHEMA }, 'demo').catch(async (err: unknown) => {
    child.kill('SIGKILL');
    await done;
    throw err;
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    metricsUrl,
    child,
    stderr,
    stdout,
    exited: done,
    alice: { token },
    fetch(path, init = {}) {
      const { as = 'alice', ...rest } = init;
      const headers = new Headers(rest.headers);
      if (as !== 'anonymous' && !headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
      return fetch(url + path, { ...rest, headers });
    },
    async kill(signal) {
      child.kill(signal);
      return done;
    },
  };
}

/**
 * A TCP proxy on a free port in front of `target` (host:port): `pause()` stops forwarding in
 * both directions while keeping every connection open, as a network partition that drops
 * packets does (a stopped server would refuse, which is another outage).
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<{ port: number; pause(): void; close(): Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  let paused = false;
  const server = createNetServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('data', (d: Buffer) => void (paused || upstream.write(d)));
    upstream.on('data', (d: Buffer) => void (paused || client.write(d)));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as import('node:net').AddressInfo).port;
  return {
    port,
    pause: () => void (paused = true),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
