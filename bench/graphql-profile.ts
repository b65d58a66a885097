/**
 * `npx tsx bench/graphql-profile.ts [simple|apq|reject] [seconds]` (after `npm run build`):
 * runs the service under `node --cpu-prof`, loads /graphql with wrk (1 thread, 50
 * connections) for `seconds` (10), stops it (the profile is written on exit) and prints
 * where the CPU went (bench/graphql/profile-summary.ts), in shares and µs per request.
 * PROFILE_ENTRY=<path to another build's dist/src/main.js> profiles that build instead
 * (BENCHMARKS.md's "before" column is the build of `d3d4b2b`, before the /graphql edge route
 * and its hash-only APQ path).
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256Hex } from '../src/graphql/persisted';
import { OVER_COST, SIMPLE } from './graphql-peers';
import { summarize, type Profile } from './graphql/profile-summary';
import { wrk } from './graphql/wrk';
import { serviceEntry, startServer } from './lib/server';

async function main(): Promise<void> {
  const scenario = process.argv[2] ?? 'simple';
  const seconds = Number(process.argv[3] ?? 10);
  const profDir = mkdtempSync(join(tmpdir(), 'orderline-prof-'));
  const dataDir = mkdtempSync(join(tmpdir(), 'orderline-prof-data-'));
  const svc = await startServer({
    cmd: process.execPath,
    args: ['--cpu-prof', '--cpu-prof-dir', profDir, process.env.PROFILE_ENTRY ?? serviceEntry],
    env: { DATA_DIR: dataDir, LOG_LEVEL: 'silent', NODE_ENV: 'production' },
    cleanup: () => rmSync(dataDir, { recursive: true, force: true }),
  });
  const token = (await svc.waitForOutput(/demo token/)).trim().split(' ').pop()!;
  const headers = { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${token}` };
  const pq = { persistedQuery: { version: 1, sha256Hash: sha256Hex(SIMPLE) } };
  const body = scenario === 'apq' ? JSON.stringify({ extensions: pq }) : JSON.stringify({ query: scenario === 'reject' ? OVER_COST : SIMPLE });
  if (scenario === 'apq') await fetch(`${svc.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: SIMPLE, extensions: pq }) });
  const res = await wrk({ url: `${svc.url}/graphql`, body, headers }, seconds, 50);
  await svc.stop();
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('no profile written');
  const { total, rows } = summarize(JSON.parse(readFileSync(join(profDir, file), 'utf8')) as Profile);
  if (process.env.KEEP_PROFILE) console.log(`profile: ${join(profDir, file)}`);
  else rmSync(profDir, { recursive: true, force: true });
  console.log(`${scenario}: ${res.requests} requests in ${seconds} s (${Math.round(res.rps)} req/s under the profiler), ${res.non2xx} non-2xx`);
  console.log('| where | share of busy CPU | µs per request |');
  console.log('|---|---|---|');
  for (const [name, t] of rows) console.log(`| ${name} | ${((t / total) * 100).toFixed(1)}% | ${(t / res.requests).toFixed(0)} |`);
  console.log(`| total busy | 100% | ${(total / res.requests).toFixed(0)} |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
