/**
 * The real server (`src/main.ts` under tsx) as a child process on a SQLite data dir, for
 * the tests that kill it (kill -9) and start it again on the same file. `preload` adds
 * `--require` modules (test hooks such as crashAfterCommit.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '../..');

/** Resolves once the banner is out; `token` only on a first start (a restart mints none: the demo policy). */
export function startServerProcess(dataDir: string, preload: string[] = [], env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string; token: string | undefined; stdout: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', ...preload.flatMap((p) => ['--require', p]), join(root, 'src/main.ts')], {
      cwd: root,
      env: { ...process.env, PORT: '0', METRICS_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The log lines (JSON, one per line), kept for the test to read.
    let logged = '';
    child.stdout.on('data', (d: Buffer) => (logged += d.toString()));
    // The banner comes on stderr (a refusal too: the early exit's error carries it).
    let out = '';
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      const token = /demo token \(account "demo"\): (\S+)/.exec(out)?.[1];
      if (url && out.endsWith('\n\n')) resolve({ child, url, token, stdout: () => logged });
    });
    child.once('exit', (code) => reject(new Error(`server exited early with ${code}: ${out}`)));
  });
}
