/**
 * Servers under test run as child processes, so the load generator (this process) and the
 * server never share an event loop. A server is ready when GET <url><readyPath> answers 2xx.
 *
 * BENCH_TARGET_CMD replaces the service with any command (run by `sh -c`, so it may use
 * shell words; it gets PORT, HOST, DATA_DIR and LOG_LEVEL like the service), e.g. to test the
 * harness against a second copy of the baseline:
 *   BENCH_TARGET_CMD='node -r tsx/cjs bench/baseline/koa-hello.ts' npm run bench -- healthz
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const root = join(__dirname, '..', '..');
export const serviceEntry = join(root, 'dist/src/main.js');

export interface Running {
  /** e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  /**
   * Where its `/metrics` is: the service's operator listener (its own port, read from its
   * banner), or `url` for a peer that serves metrics on its one port.
   */
  metricsUrl: string;
  /** What the command line was, for reports. */
  command: string;
  /** The child's pid (with BENCH_TARGET_CMD, the command's own: `sh -c exec`). */
  pid: number;
  /** When it was spawned, and when it first answered the ready path (Date.now() ms, polled every 50 ms). */
  startedAt: number;
  readyAt: number;
  /** Lines the process has printed on stdout so far. */
  output: string[];
  /** Resolves with the first stdout or stderr line matching `re` (waits up to `ms`). */
  waitForOutput(re: RegExp, ms?: number): Promise<string>;
  stop(): Promise<void>;
  /** Sends `signal` (no fallback) and resolves once the process has exited. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

export interface StartOptions {
  /** Executable and arguments (spawned directly, no shell). */
  cmd: string;
  args: string[];
  env?: Record<string, string>;
  /** The port to listen on (a restart on the port its clients know); default a free one. */
  port?: number;
  /** orderline itself: metrics on the operator listener, whose URL its banner prints (else they are on `url`). */
  metricsOnOwnPort?: boolean;
  /** Path polled until it answers 2xx; default /healthz. */
  readyPath?: string;
  /** Default 30 s. */
  readyTimeoutMs?: number;
  /** Run after the process has exited. */
  cleanup?: () => void;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/** A port that was free a moment ago: listen on 0, note the port, close. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts `cmd` with PORT=<free port>, HOST=127.0.0.1 and METRICS_PORT=0 (any free port: several may run at once) and waits until it is ready. */
export async function startServer(opts: StartOptions): Promise<Running> {
  const port = opts.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const command = [opts.cmd, ...opts.args].join(' ');
  const startedAt = Date.now();
  const child = spawn(opts.cmd, opts.args, {
    cwd: root,
    env: { ...process.env, HOST: '127.0.0.1', METRICS_PORT: '0', ...opts.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);

  const output: string[] = [];
  const stderr: string[] = [];
  const waiters: { re: RegExp; resolve: (line: string) => void }[] = [];
  const lines = (stream: NodeJS.ReadableStream, into: string[], onLine?: (l: string) => void) => {
    let buf = '';
    stream.on('data', (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      for (const l of parts) {
        into.push(l);
        if (into.length > 1000) into.shift();
        onLine?.(l);
      }
    });
  };
  // A waited-for line may come on either stream (orderline's start banner is on stderr).
  const onLine = (l: string) => {
    for (const w of [...waiters]) {
      if (!w.re.test(l)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(l);
    }
  };
  lines(child.stdout, output, onLine);
  lines(child.stderr, stderr, onLine);

  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      children.delete(child);
      opts.cleanup?.();
      resolve();
    }),
  );
  const died = () => new Error(`${command} exited (${exited?.signal ?? exited?.code}) before it was ready:\n${[...output, ...stderr].slice(-20).join('\n')}`);

  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exit;
    clearTimeout(killer);
  };
  const kill = async (signal: NodeJS.Signals) => {
    if (exited) return;
    child.kill(signal);
    await exit;
  };

  const readyPath = opts.readyPath ?? '/healthz';
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (exited) throw died();
    try {
      const res = await fetch(url + readyPath, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${command} did not answer GET ${readyPath} with 2xx within ${opts.readyTimeoutMs ?? 30_000} ms`);
    }
    await sleep(50);
  }
  const readyAt = Date.now();

  const waitForOutput = (re: RegExp, ms = 5000): Promise<string> => {
    const seen = [...output, ...stderr].find((l) => re.test(l));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${command} printed no line matching ${re} within ${ms} ms`)), ms);
      waiters.push({ re, resolve: (l) => (clearTimeout(timer), resolve(l)) });
    });
  };
  const metricsUrl = opts.metricsOnOwnPort ? (/(http:\/\/\S+)\/metrics/.exec(await waitForOutput(/metrics \(operators only/, 10_000).catch(() => ''))?.[1] ?? url) : url;

  return { url, metricsUrl, command, pid: child.pid!, startedAt, readyAt, output, stop, kill, waitForOutput };
}

/** The BENCH_TARGET_CMD override, if set. */
export const targetOverride = process.env.BENCH_TARGET_CMD?.trim() || undefined;

/**
 * The service as `npm start` runs it (compiled dist/src/main.js) on a fresh DATA_DIR with
 * logs off; or BENCH_TARGET_CMD when set. `at` restarts it where it was: on that port, on
 * that DATA_DIR (which the caller owns: it is not removed when the process exits).
 */
export function startService(env: Record<string, string> = {}, at: { port?: number; dataDir?: string } = {}): Promise<Running> {
  if (!targetOverride && !existsSync(serviceEntry)) throw new Error('dist/src/main.js is missing: run npm run build first');
  const dir = at.dataDir ?? mkdtempSync(join(tmpdir(), 'orderline-bench-'));
  const [cmd, args] = targetOverride ? ['/bin/sh', ['-c', `exec ${targetOverride}`]] : [process.execPath, [serviceEntry]];
  return startServer({
    cmd,
    args,
    port: at.port,
    // Benches drive thousands of streams with one demo token: no per-account stream cap.
    env: { DATA_DIR: dir, LOG_LEVEL: 'silent', MAX_STREAMS_PER_ACCOUNT: '0', ...env },
    metricsOnOwnPort: !targetOverride,
    cleanup: at.dataDir === undefined ? () => rmSync(dir, { recursive: true, force: true }) : undefined,
  });
}

/**
 * A baseline from bench/baseline/: by default koa-hello.ts, a bare Koa 3 app answering
 * {status:'ok'} on every path; graphql-bare.ts is the bare graphql-http server. Each gets
 * its own fresh DATA_DIR; `env` adds variables (e.g. a PostgreSQL peer's URL and schema).
 */
export function startBaseline(script = 'koa-hello.ts', readyPath = '/', env: Record<string, string> = {}): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-bench-base-'));
  return startServer({
    cmd: process.execPath,
    args: ['-r', 'tsx/cjs', join(root, 'bench/baseline', script)],
    env: { DATA_DIR: dir, ...env },
    readyPath,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  });
}
