/**
 * `npx tsx bench/ab-builds.ts <before dist/src/main.js> [after dist/src/main.js]`: two builds
 * of the service side by side, each on its own fresh DATA_DIR, loaded by wrk (-t1 -c50, 5 s)
 * in alternating rounds (AB_ROUNDS, default 3, after a warm-up) per scenario: the simple
 * GraphQL query, GET /orders/1, GET /orders?limit=5, POST /orders and PATCH /orders/1
 * (`AB_SCENARIOS`: a comma-separated subset of graphql,get,list,create,patch; `AB_DATA_ROOT`
 * for where the data lives). Prints each
 * build's req/s per round, after/before of the mean req/s, and each build's server CPU per
 * request (user + system time of its process over the round, /proc): CPU per request is the
 * steadier figure when the machine is noisy, since a round that lost the CPU to something
 * else loses requests, not CPU per request. For telling a change's cost from the machine's: a
 * ratio between two builds in the same rounds. Build the other commit first, e.g.
 * `git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/ && (cd /tmp/before && npm run build)`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { serviceEntry, startServer } from './lib/server';
import { cpuUsOf } from './lib/realtime-proc';
import { envNumber } from './lib/env';

const SIMPLE = '{ user(id: "u1") { name friends(first: 5) { name } } }';
const ROUNDS = envNumber('AB_ROUNDS', 3);
/** Where the builds' DATA_DIRs go: `AB_DATA_ROOT=/dev/shm` (tmpfs) takes the disk's fsync stalls out of a write comparison. */
const DATA_ROOT = process.env.AB_DATA_ROOT || tmpdir();

async function start(entry: string) {
  const dataDir = mkdtempSync(join(DATA_ROOT, 'orderline-ab-'));
  const svc = await startServer({ cmd: process.execPath, args: [entry], env: { DATA_DIR: dataDir, LOG_LEVEL: 'silent', NODE_ENV: 'production' }, cleanup: () => undefined });
  const token = (await svc.waitForOutput(/demo token/)).trim().split(' ').pop() ?? '';
  return { svc, token };
}

/** One wrk run: req/s and the server's CPU µs per request over it. */
function wrk(pid: number, url: string, token: string, script: string | undefined): { rps: number; cpu: number } {
  const args = ['-t1', '-c50', '-d5s', '-H', `authorization: Bearer ${token}`, ...(script ? ['-s', script] : []), url];
  const before = cpuUsOf(pid);
  const out = execFileSync('wrk', args, { encoding: 'utf8' });
  const used = cpuUsOf(pid) - before;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]), cpu: used / requests };
}

function scripts(dir: string): Record<string, string> {
  const lua = (name: string, lines: string[]) => {
    const path = join(dir, `${name}.lua`);
    writeFileSync(path, lines.join('\n') + '\n');
    return path;
  };
  return {
    graphql: lua('graphql', ['wrk.method="POST"', `wrk.body=${JSON.stringify(JSON.stringify({ query: SIMPLE }))}`, 'wrk.headers["content-type"]="application/json"']),
    create: lua('create', [
      'wrk.method="POST"',
      'wrk.headers["content-type"]="application/json"',
      `wrk.body=${JSON.stringify(JSON.stringify({ items: [{ sku: 'TEA-1', quantity: 2, unit_price_cents: 450 }], currency: 'EUR', note: 'ab' }))}`,
    ]),
    // A note no request repeats, so every PATCH writes.
    patch: lua('patch', [
      'wrk.method="PATCH"',
      'wrk.headers["content-type"]="application/merge-patch+json"',
      'wrk.headers["if-match"]="*"',
      'local n = 0',
      'request = function()',
      '  n = n + 1',
      '  return wrk.format(nil, nil, nil, \'{"note":"ab \' .. n .. \'"}\')',
      'end',
    ]),
  };
}

async function main(): Promise<void> {
  const [before, after = serviceEntry] = process.argv.slice(2);
  if (!before) throw new Error('usage: npx tsx bench/ab-builds.ts <before dist/src/main.js> [after dist/src/main.js]');
  const lua = scripts(mkdtempSync(join(tmpdir(), 'orderline-ab-lua-')));
  const all = [
    ['graphql', 'graphql simple', '/graphql', lua.graphql],
    ['get', 'GET /orders/1', '/orders/1', undefined],
    ['list', 'GET /orders?limit=5', '/orders?limit=5', undefined],
    ['create', 'POST /orders', '/orders', lua.create],
    ['patch', 'PATCH /orders/1', '/orders/1', lua.patch],
  ] as const;
  const wanted = (process.env.AB_SCENARIOS ?? all.map((s) => s[0]).join(',')).split(',');
  const a = await start(before);
  const b = await start(after);
  const mean = (x: number[]) => x.reduce((s, v) => s + v, 0) / x.length;
  for (const [key, name, path, script] of all) {
    if (!wanted.includes(key)) continue;
    wrk(a.svc.pid, a.svc.url + path, a.token, script);
    wrk(b.svc.pid, b.svc.url + path, b.token, script);
    const ra: { rps: number; cpu: number }[] = [];
    const rb: { rps: number; cpu: number }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // The order alternates each round, so neither build always runs second.
      if (i % 2 === 0) ra.push(wrk(a.svc.pid, a.svc.url + path, a.token, script));
      rb.push(wrk(b.svc.pid, b.svc.url + path, b.token, script));
      if (i % 2 === 1) ra.push(wrk(a.svc.pid, a.svc.url + path, a.token, script));
    }
    const rps = (r: { rps: number }[]) => r.map((x) => Math.round(x.rps)).join(' ');
    const cpuA = mean(ra.map((x) => x.cpu));
    const cpuB = mean(rb.map((x) => x.cpu));
    console.log(
      `${name}: before ${rps(ra)} | after ${rps(rb)} | after/before ${(mean(rb.map((x) => x.rps)) / mean(ra.map((x) => x.rps))).toFixed(2)}` +
        ` | CPU µs/request before ${cpuA.toFixed(0)} after ${cpuB.toFixed(0)} (after/before ${(cpuB / cpuA).toFixed(2)})`,
    );
  }
  await a.svc.stop();
  await b.svc.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
