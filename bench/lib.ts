/**
 * Benchmark plumbing: servers run as child processes (so the load generator and the
 * server do not share an event loop), load comes from autocannon, and target and
 * baseline are measured alternately in the same run so machine noise hits both.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

export const root = join(__dirname, '..');

export interface Running {
  url: string;
  /** Lines the process printed on stdout. */
  output: string[];
  stop(): Promise<void>;
}

function start(cmd: string, args: string[], env: Record<string, string>, cleanup?: () => void): Promise<Running> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    const output: string[] = [];
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start in 30 s`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const line of lines) {
        output.push(line);
        const m = /listening on (http:\/\/\S+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          // The service prints its token after the URL line: give it a moment.
          setTimeout(
            () =>
              resolve({
                url: m[1],
                output,
                stop: () =>
                  new Promise<void>((r) => {
                    child.once('exit', () => {
                      cleanup?.();
                      r();
                    });
                    child.kill('SIGTERM');
                  }),
              }),
            200,
          );
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

/** The service as `npm start` runs it (compiled dist/), on a fresh data dir, logs off. */
export function startService(env: Record<string, string> = {}): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-bench-'));
  return start(process.execPath, [join(root, 'dist/src/main.js')], { PORT: '0', DATA_DIR: dir, LOG_LEVEL: 'silent', ...env }, () =>
    rmSync(dir, { recursive: true, force: true }),
  );
}

export function startBaseline(): Promise<Running> {
  return start(process.execPath, ['--require', 'tsx/cjs', join(root, 'bench/baseline/koa-hello.ts')], { PORT: '0' });
}

export interface Load {
  url: string;
  method?: 'GET' | 'PATCH' | 'POST';
  headers?: Record<string, string>;
  /** A body per request (called for each one), for writes that must differ. */
  body?: () => string;
  connections?: number;
  seconds?: number;
}

export interface Measured {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  statuses: Record<string, number>;
}

export async function measure(load: Load): Promise<Measured> {
  const statuses: Record<string, number> = {};
  const result = await autocannon({
    url: load.url,
    method: load.method ?? 'GET',
    headers: load.headers,
    connections: load.connections ?? 50,
    duration: load.seconds ?? 5,
    requests: load.body ? [{ setupRequest: (req) => ({ ...req, body: load.body!() }) }] : undefined,
    setupClient: (client) => client.on('response', (status: number) => (statuses[status] = (statuses[status] ?? 0) + 1)),
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    statuses,
  };
}

/** Prometheus text -> value of one sample (first match). */
export function metric(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}
