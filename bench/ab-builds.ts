/**
 * `npx tsx bench/ab-builds.ts <before dist/src/main.js> [after dist/src/main.js]`: two builds
 * of the service side by side, each on its own fresh DATA_DIR, loaded by wrk (-t1 -c50, 5 s)
 * in alternating rounds (3 after a warm-up): the simple GraphQL query and GET /orders/1.
 * Prints each build's req/s per round and after/before. For telling a change's cost from the
 * machine's: a ratio between two builds in the same rounds. Build the other commit first,
 * e.g. `git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci && npm run build)`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { serviceEntry, startServer } from './lib/server';

const SIMPLE = '{ user(id: "u1") { name friends(first: 5) { name } } }';

async function start(entry: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'orderline-ab-'));
  const svc = await startServer({ cmd: process.execPath, args: [entry], env: { DATA_DIR: dataDir, LOG_LEVEL: 'silent', NODE_ENV: 'production' }, cleanup: () => undefined });
  const token = (await svc.waitForOutput(/demo token/)).trim().split(' ').pop() ?? '';
  return { svc, token };
}

function wrk(url: string, token: string, script: string | undefined): number {
  const args = ['-t1', '-c50', '-d5s', '-H', `authorization: Bearer ${token}`, ...(script ? ['-s', script] : []), url];
  const out = execFileSync('wrk', args, { encoding: 'utf8' });
  return Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
}

async function main(): Promise<void> {
  const [before, after = serviceEntry] = process.argv.slice(2);
  if (!before) throw new Error('usage: npx tsx bench/ab-builds.ts <before dist/src/main.js> [after dist/src/main.js]');
  const lua = join(mkdtempSync(join(tmpdir(), 'orderline-ab-lua-')), 'graphql.lua');
  writeFileSync(lua, `wrk.method="POST"\nwrk.body=${JSON.stringify(JSON.stringify({ query: SIMPLE }))}\nwrk.headers["content-type"]="application/json"\n`);
  const a = await start(before);
  const b = await start(after);
  const mean = (x: number[]) => x.reduce((s, v) => s + v, 0) / x.length;
  for (const [name, path, script] of [
    ['graphql simple', '/graphql', lua],
    ['GET /orders/1', '/orders/1', undefined],
  ] as const) {
    wrk(a.svc.url + path, a.token, script);
    wrk(b.svc.url + path, b.token, script);
    const ra: number[] = [];
    const rb: number[] = [];
    for (let i = 0; i < 3; i++) {
      ra.push(wrk(a.svc.url + path, a.token, script));
      rb.push(wrk(b.svc.url + path, b.token, script));
    }
    console.log(`${name}: before ${ra.map(Math.round).join(' ')} | after ${rb.map(Math.round).join(' ')} | after/before ${(mean(rb) / mean(ra)).toFixed(2)}`);
  }
  await a.svc.stop();
  await b.svc.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
