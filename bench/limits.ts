/**
 * `npm run bench:limits [-- --write]`: what the per-account REST rate limit
 * and the GraphQL cost budget cost per request. Three sides of the service, each a whole
 * app over its own embedded store, served by one process (bench/limits-sides.ts says
 * why): "off" (the defaults), "control" (the defaults again) and "on" (RATE_LIMIT_RPS /
 * GRAPHQL_COST_BUDGET so large that nothing is ever refused, so every request pays the
 * full check and nothing else differs). Load: wrk (its own process), GET /orders/1 (the
 * rate limit's request) and POST /graphql with the simple query of bench:graphql (the
 * budget's), with the demo token; after a warm-up, rounds alternate over the two requests
 * (GET, then GraphQL, then the other way round) and over the sides.
 * The verdict is the process's CPU time per request (/proc user + system around each
 * round / its requests; only the loaded side works), per round and side: it is what a
 * limit adds to each request, and a busy machine disturbs it far less than req/s (also
 * reported, medians). In every round a request's sides run back to back, which first
 * rotating by round, so the machine's drift hits them alike; the verdict is the median
 * over rounds of the on/off CPU ratio. The control's ratio to "off", taken the same way,
 * is what the method reads between identical sides. Each round is printed, so a reader
 * sees the spread.
 *
 * Environment: BENCH_ROUNDS (11: a pair of rounds moves by about 3 %, so the median needs many), BENCH_SECONDS (4), BENCH_WARMUP_SECONDS (2),
 * BENCH_CONNECTIONS (50), BENCH_PIN (1; 0 leaves placement to the scheduler, see PIN).
 * With --write the section between `<!-- limits:start -->` and `<!-- limits:end -->` of
 * BENCHMARKS.md is replaced.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { envNumber as num } from './lib/env';
import { editBenchmarks, replaceBetween } from './lib/report';
import { root, startServer } from './lib/server';
import { cpuUsOf } from './lib/realtime-proc';
import { SIMPLE } from './graphql-peers';

const GRAPHQL_BODY = JSON.stringify({ query: SIMPLE });

const ROUNDS = num('BENCH_ROUNDS', 11);
const SECONDS = num('BENCH_SECONDS', 4);
const WARMUP = num('BENCH_WARMUP_SECONDS', 2);
const CONNECTIONS = num('BENCH_CONNECTIONS', 50);

interface Side {
  name: string;
  pid: number;
  url: string;
  headers: Record<string, string>;
  script?: string;
}

const execFileAsync = promisify(execFile);

/**
 * CPU pinning (Linux taskset, when present and there are 2+ cores): every service (all its
 * threads) on the last core, wrk on the first. Unpinned, the scheduler placed each service
 * for a while on wrk's core or off it, and a service's CPU per request moved by 20-25 % for
 * rounds at a time, the same build against itself (2026-11-25: off 19 µs for four rounds,
 * then 23 µs, while a second identical service stayed at 19).
 */
const PIN = process.env.BENCH_PIN !== '0' && cpus().length >= 2 && hasTaskset() ? { load: '0', service: String(cpus().length - 1) } : undefined;
function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function wrk(side: Side, seconds: number): Promise<{ rps: number; bad: number; cpuUsPerRequest: number }> {
  const cpuBefore = cpuUsOf(side.pid);
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`];
  for (const [k, v] of Object.entries(side.headers)) args.push('-H', `${k}: ${v}`);
  if (side.script) args.push('-s', side.script);
  args.push(side.url);
  const { stdout: out } = await (PIN ? execFileAsync('taskset', ['-c', PIN.load, 'wrk', ...args], { encoding: 'utf8' }) : execFileAsync('wrk', args, { encoding: 'utf8' }));
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  if (!Number.isFinite(rps)) throw new Error(`cannot read wrk output:\n${out}`);
  const bad = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  return { rps, bad, cpuUsPerRequest: (cpuUsOf(side.pid) - cpuBefore) / requests };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-bench-limits-'));
  const gqlScript = join(dir, 'graphql.lua');
  writeFileSync(gqlScript, ['wrk.method = "POST"', 'wrk.headers["Content-Type"] = "application/json"', `wrk.body = [==[${GRAPHQL_BODY}]==]`, ''].join('\n'));
  const before = loadavg()[0];
  // One process serves the three sides (bench/limits-sides.ts says why); its CPU over a
  // round is the loaded side's, the other two being idle.
  const proc = await startServer({ cmd: process.execPath, args: ['-r', 'tsx/cjs', join(root, 'bench/limits-sides.ts')] });
  if (PIN) execFileSync('taskset', ['-a', '-p', '-c', PIN.service, String(proc.pid)], { stdio: 'ignore' });
  try {
    const announced = JSON.parse((await proc.waitForOutput(/^sides /)).slice('sides '.length)) as Record<'off' | 'control' | 'on', { url: string; token: string }>;
    const sides: Side[] = [];
    for (const label of ['off', 'control', 'on'] as const) {
      const s = { url: announced[label].url, pid: proc.pid };
      const auth = { Authorization: `Bearer ${announced[label].token}` };
      sides.push({ name: `GET ${label}`, pid: s.pid, url: `${s.url}/orders/1`, headers: auth });
      sides.push({ name: `GraphQL ${label}`, pid: s.pid, url: `${s.url}/graphql`, headers: auth, script: gqlScript });
      // Check each side answers what it should before measuring.
      const get = await fetch(`${s.url}/orders/1`, { headers: auth });
      if (get.status !== 200 || (label === 'on') !== get.headers.has('ratelimit')) throw new Error(`${label}: GET answered ${get.status}, RateLimit ${get.headers.get('ratelimit')}`);
      const gql = await fetch(`${s.url}/graphql`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: GRAPHQL_BODY });
      const body = (await gql.json()) as { data?: unknown; extensions?: unknown };
      if (gql.status !== 200 || !body.data || (label === 'on') !== (body.extensions !== undefined)) throw new Error(`${label}: GraphQL answered ${gql.status} ${JSON.stringify(body)}`);
    }
    for (const s of sides) await wrk(s, WARMUP);
    const runs = new Map(sides.map((s) => [s.name, [] as number[]]));
    const cpu = new Map(sides.map((s) => [s.name, [] as number[]]));
    let bad = 0;
    for (let r = 0; r < ROUNDS; r++) {
      // A request's off and on sides run one right after the other, which one first
      // alternating by round. (Loading both at once, as this bench did before, put two
      // servers and two wrk on 2 cores: the scheduler's favour then decided the pair's
      // ratio, +9 % and +36 % for the same build in two runs, against 2.5 µs measured in process.)
      // The control, a second "off" side, runs in the same rotation: its ratio to "off" is
      // what this method reads between two identical services, i.e. its resolution.
      const order = r % 2 ? ['GraphQL', 'GET'] : ['GET', 'GraphQL'];
      const line: string[] = [];
      for (const scenario of order) {
        const pair = ['off', 'control', 'on'].map((l) => sides.find((x) => x.name === `${scenario} ${l}`)!);
        const results: Awaited<ReturnType<typeof wrk>>[] = [];
        for (const i of [
          [0, 1, 2],
          [2, 0, 1],
          [1, 2, 0],
        ][r % 3])
          results[i] = await wrk(pair[i], SECONDS);
        pair.forEach((s, i) => {
          const res = results[i];
          runs.get(s.name)!.push(res.rps);
          cpu.get(s.name)!.push(res.cpuUsPerRequest);
          bad += res.bad;
          line.push(`${s.name} ${Math.round(res.rps)} req/s ${res.cpuUsPerRequest.toFixed(1)} µs`);
        });
      }
      console.error(`  round ${r + 1}/${ROUNDS}: ${line.join(' | ')}`);
    }
    const median = (xs: number[]) => {
      const v = [...xs].sort((a, b) => a - b);
      return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    };
    const med = (m: Map<string, number[]>, name: string) => median(m.get(name)!);
    const pct = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)} %`;
    const row = (what: string, scenario: string, limit: number) => {
      const [o, n] = [med(runs, `${scenario} off`), med(runs, `${scenario} on`)];
      const [co, cn] = [med(cpu, `${scenario} off`), med(cpu, `${scenario} on`)];
      const [offs, ctls, ons] = [cpu.get(`${scenario} off`)!, cpu.get(`${scenario} control`)!, cpu.get(`${scenario} on`)!];
      const triples = offs.map((x, i) => `${x.toFixed(1)}/${ctls[i].toFixed(1)}/${ons[i].toFixed(1)}`).join(', ');
      // The verdict: the median of each round's on/off ratio (the sides ran back to back), robust to the machine's drift between rounds.
      const share = (median(offs.map((x, i) => ons[i] / x)) - 1) * 100;
      const controlShare = (median(offs.map((x, i) => ctls[i] / x)) - 1) * 100;
      return `| ${what} | ${Math.round(o)} | ${Math.round(n)} | ${co.toFixed(1)} | ${cn.toFixed(1)} | ${pct((cn / co - 1) * 100)} | ${pct(share)} | ${pct(controlShare)} | < ${limit} % | ${share < limit ? 'yes' : 'no'} | ${triples} |`;
    };
    const after = loadavg()[0];
    const text = [
      "| request | req/s off | req/s on | server CPU µs/request off | on | medians on vs off | CPU per request on vs off, median of the rounds' pairs | control (a second off side) vs off, the same way | target | met | rounds, CPU µs/request off/control/on |",
      '|---|---|---|---|---|---|---|---|---|---|---|',
      row('GET /orders/1 (REST rate limit)', 'GET', 5),
      row('POST /graphql simple query `' + SIMPLE + '` (cost budget)', 'GraphQL', 5),
      '',
      `Last run: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; medians of ${ROUNDS} rounds x ${SECONDS} s per side, off, control and on back to back in each round (which first rotating), wrk -t1 -c${CONNECTIONS}${PIN ? ` (pinned to core ${PIN.load}, the services to core ${PIN.service})` : ' (unpinned)'}, embedded store, the three sides in one process (bench/limits-sides.ts); ${cpus().length} cores, load average ${before.toFixed(2)} before and ${after.toFixed(2)} after${bad ? `; ${bad} non-2xx responses (must be 0)` : ''}.`,
    ].join('\n');
    console.log(text);
    if (process.argv.includes('--write')) {
      editBenchmarks((md) => replaceBetween(md, '<!-- limits:start -->', '<!-- limits:end -->', text));
      console.log('bench: updated the limits section of BENCHMARKS.md');
    }
  } finally {
    await proc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
