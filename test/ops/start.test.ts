/**
 * `npm start` under a supervisor: the SIGTERM a supervisor sends to the process it started
 * (npm) reaches the server, which drains and exits. npm runs the script through a shell; the
 * script `exec`s node, so the shell does not stand between npm's forwarded signal and the server.
 * Its stdout is JSON log lines only (a log shipper reads them as they come); the start banner,
 * text for the person who started it, is on stderr.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '../..');

it('SIGTERM to npm start drains the server and ends it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-start-'));
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', DATA_DIR: dir, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  npm.stdout.on('data', (d: Buffer) => (out += String(d)));
  npm.stderr.on('data', (d: Buffer) => (err += String(d)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      npm.stderr.on('data', () => {
        const m = /listening on (http:\/\/\S+)/.exec(err);
        if (m && err.includes('\n\n')) resolve(m[1]);
      });
      npm.once('exit', (code) => reject(new Error(`npm start exited ${code}: ${out}${err}`)));
    });
    expect(err).toContain('demo token');
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    npm.kill('SIGTERM');
    await exited;
    // The server drained (its log says so) and no longer answers.
    for (let i = 0; i < 200 && !out.includes('"msg":"shutting down'); i++) await new Promise((r) => setTimeout(r, 25));
    expect(out).toContain('"signal":"SIGTERM"');
    let answered = true;
    for (let i = 0; i < 200 && answered; i++) {
      answered = await fetch(`${url}/healthz`).then(
        () => true,
        () => false,
      );
      if (answered) await new Promise((r) => setTimeout(r, 25));
    }
    expect(answered).toBe(false);
    const lines = out.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThanOrEqual(2); // "listening", "shutting down"
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
  } finally {
    npm.kill('SIGKILL');
    // The server itself, should it outlive npm (it did while the script ran node through a shell).
    const pid = Number(/"pid":(\d+)/.exec(out)?.[1]);
    if (pid) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
