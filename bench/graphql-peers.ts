/**
 * `npm run bench:graphql [-- --write]`: the service's /graphql against its peers in one
 * run, measured with wrk (1 thread, BENCH_CONNECTIONS = 50 connections):
 *
 *   orderline (dist/src/main.js)  vs  Mercurius 16 on Fastify 5, jit: 1, + graphql-armor (bench/baseline/graphql-mercurius.ts)
 *                                 vs  GraphQL Yoga 5 + graphql-armor (bench/baseline/graphql-yoga.ts)
 *                                 vs  Apollo Server 5 + graphql-armor (bench/baseline/graphql-apollo.ts)
 *                                 and bare graphql-http (bench/baseline/graphql-bare.ts) as a reference.
 *
 * All serve the same schema, resolvers, DataLoaders and demo data (graphql-peer-data.ts);
 * all run with NODE_ENV=production (Apollo and Yoga leave stack traces out of errors, our
 * service turns introspection off). Before any timing every server is checked: the
 * simple query returns the same `data` as the service's, a hash-only APQ request
 * returns it too once the hash is registered, and the over-cost query is refused (errors,
 * no `data` or Mercurius' `data: null`); what each refuses and with which status and
 * message goes into the report.
 *
 * Scenarios: `simple` (text query), `apq` (hash only, registered before), `reject`
 * (over-cost query). Each: a warm-up per server, then BENCH_ROUNDS rounds, each round
 * every server once in a rotating order; a server's figure is the median of its rounds.
 * Targets: simple and apq >= 1.5x the better of Yoga and Apollo, reject >= 1.0x;
 * the table also gives orderline over Mercurius and over Apollo alone (req/s and CPU).
 * BENCH_ROUNDS (5), BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (50).
 * With --write the "GraphQL against peers" section of BENCHMARKS.md is replaced.
 * Run it alone on the machine: `flock /tmp/orderline-bench.lock npm run bench:graphql -- --write`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { envNumber as num } from './lib/env';
import { editBenchmarks, replaceBetween } from './lib/report';
import { serviceEntry, startBaseline, startService, type Running } from './lib/server';
import { cpuUsOf } from './lib/realtime-proc';
import { wrk, type WrkLoad } from './graphql/wrk';
import { sha256Hex } from '../src/graphql/persisted';

const ROUNDS = num('BENCH_ROUNDS', 5);
const SECONDS = num('BENCH_SECONDS', 5);
const WARMUP = num('BENCH_WARMUP_SECONDS', 2);
const CONNECTIONS = num('BENCH_CONNECTIONS', 50);

export const SIMPLE = '{ user(id: "u1") { name friends(first: 5) { name } } }';
export const OVER_COST = '{ user(id: "u1") { friends { friends { friends { name } } } } }'; // 3222 > 1000 in our model

/** `orderline-text`: the same orderline process sent the simple query as text, timed in the apq scenario's rounds. */
type ServerName = 'orderline' | 'orderline-text' | 'mercurius' | 'yoga' | 'apollo' | 'bare';
const LABEL: Record<ServerName, string> = {
  orderline: 'orderline',
  'orderline-text': 'orderline, the query as text',
  mercurius: 'Mercurius 16 (jit) + armor',
  yoga: 'Yoga 5 + armor',
  apollo: 'Apollo Server 5 + armor',
  bare: 'bare graphql-http',
};

interface Server {
  name: ServerName;
  running: Running;
  headers: Record<string, string>;
}

interface Scenario {
  name: 'simple' | 'apq' | 'reject';
  what: string;
  body: string;
  servers: ServerName[];
  target: number;
  /** A body per server when it differs from `body` (orderline-text). */
  bodyOf?: Partial<Record<ServerName, string>>;
}

const apqBody = (text: string, withText: boolean) => JSON.stringify({ ...(withText ? { query: text } : {}), extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(text) } } });

const SCENARIOS: Scenario[] = [
  { name: 'simple', what: `simple query \`${SIMPLE}\` as text`, body: JSON.stringify({ query: SIMPLE }), servers: ['orderline', 'mercurius', 'yoga', 'apollo', 'bare'], target: 1.5 },
  // orderline-text in the same rounds: "a hash-only request never costs more than the text" is judged within one scenario, not across two.
  {
    name: 'apq',
    what: 'the same query as a hash-only APQ request (registered before)',
    body: apqBody(SIMPLE, false),
    servers: ['orderline', 'orderline-text', 'mercurius', 'yoga', 'apollo'],
    target: 1.5,
    bodyOf: { 'orderline-text': JSON.stringify({ query: SIMPLE }) },
  },
  { name: 'reject', what: `over-cost query \`${OVER_COST}\``, body: JSON.stringify({ query: OVER_COST }), servers: ['orderline', 'mercurius', 'yoga', 'apollo'], target: 1.0 },
];

async function startAll(): Promise<Server[]> {
  const base = { 'content-type': 'application/json', accept: 'application/graphql-response+json' };
  const service = await startService();
  const token = (await service.waitForOutput(/demo token/)).trim().split(' ').pop()!;
  const peers = await Promise.all([
    startBaseline('graphql-yoga.ts', '/health'),
    startBaseline('graphql-apollo.ts', '/?query=%7B__typename%7D'),
    startBaseline('graphql-bare.ts', '/healthz'),
    startBaseline('graphql-mercurius.ts', '/health'),
  ]);
  return [
    { name: 'orderline', running: service, headers: { ...base, authorization: `Bearer ${token}` } },
    { name: 'orderline-text', running: service, headers: { ...base, authorization: `Bearer ${token}` } },
    { name: 'yoga', running: peers[0], headers: base },
    { name: 'apollo', running: peers[1], headers: base },
    { name: 'bare', running: peers[2], headers: base },
    { name: 'mercurius', running: peers[3], headers: base },
  ];
}

const load = (s: Server, body: string): WrkLoad => ({ url: `${s.running.url}/graphql`, body, headers: s.headers });

async function post(s: Server, body: string): Promise<{ status: number; json: { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] } }> {
  const res = await fetch(`${s.running.url}/graphql`, { method: 'POST', headers: s.headers, body });
  return { status: res.status, json: (await res.json()) as never };
}

/** Same data for the accepted query (text and APQ), a refusal for the over-cost one; returns what each refused and how. */
async function verify(servers: Server[]): Promise<string[]> {
  const byName = (n: ServerName) => servers.find((s) => s.name === n)!;
  const expected = await post(byName('orderline'), JSON.stringify({ query: SIMPLE }));
  if (expected.status !== 200 || expected.json.errors || !expected.json.data) throw new Error(`orderline: simple query failed: ${JSON.stringify(expected)}`);
  const notes: string[] = [];
  for (const s of servers.filter((x) => x.name !== 'orderline-text')) {
    const simple = await post(s, JSON.stringify({ query: SIMPLE }));
    if (simple.status !== 200 || simple.json.errors || !isDeepStrictEqual(simple.json.data, expected.json.data)) {
      throw new Error(`${s.name}: simple query answered ${simple.status} ${JSON.stringify(simple.json)}, not the service's data`);
    }
    if (s.name === 'bare') continue; // no APQ, no limits: a reference for the simple query only
    const miss = await post(s, apqBody(SIMPLE, false));
    const registered = await post(s, apqBody(SIMPLE, true));
    const hit = await post(s, apqBody(SIMPLE, false));
    if (registered.status !== 200 || hit.status !== 200 || !isDeepStrictEqual(hit.json.data, expected.json.data)) {
      throw new Error(`${s.name}: APQ did not return the service's data (${registered.status}, ${hit.status} ${JSON.stringify(hit.json)})`);
    }
    const rejected = await post(s, JSON.stringify({ query: OVER_COST }));
    // Refused: errors and no data. Mercurius' default error formatter writes `data: null` even for a
    // request it never executed (graphql-over-http leaves `data` out), so null counts as no data.
    if (rejected.json.data != null || !rejected.json.errors?.length) throw new Error(`${s.name}: the over-cost query was not refused: ${JSON.stringify(rejected.json)}`);
    const e = rejected.json.errors[0];
    const missError = miss.json.errors?.[0];
    notes.push(
      `${LABEL[s.name]}: APQ miss ${miss.status} ${missError?.extensions?.code ?? `"${missError?.message ?? ''}"`}; ` +
        `over-cost query refused with ${[rejected.status, e.extensions?.code, `"${e.message}"`].filter(Boolean).join(' ')}${'data' in rejected.json ? ' (with `data: null`)' : ''}`,
    );
  }
  return notes;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

interface Measured {
  scenario: Scenario;
  rounds: Map<ServerName, number[]>;
  /** The server process's CPU time per request in each round, µs (robust to a busy machine, unlike req/s). */
  cpu: Map<ServerName, number[]>;
  non2xx: Map<ServerName, number>;
}

async function measure(servers: Server[], scenario: Scenario): Promise<Measured> {
  const active = servers.filter((s) => scenario.servers.includes(s.name));
  const bodyFor = (s: Server) => scenario.bodyOf?.[s.name] ?? scenario.body;
  for (const s of active) await wrk(load(s, bodyFor(s)), WARMUP, CONNECTIONS);
  const rounds = new Map<ServerName, number[]>(active.map((s) => [s.name, []]));
  const cpu = new Map<ServerName, number[]>(active.map((s) => [s.name, []]));
  const non2xx = new Map<ServerName, number>(active.map((s) => [s.name, 0]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = active.map((_, i) => active[(i + r) % active.length]);
    const line: string[] = [];
    for (const s of order) {
      const cpu0 = cpuUsOf(s.running.pid);
      const res = await wrk(load(s, bodyFor(s)), SECONDS, CONNECTIONS);
      cpu.get(s.name)!.push((cpuUsOf(s.running.pid) - cpu0) / res.requests);
      rounds.get(s.name)!.push(res.rps);
      non2xx.set(s.name, non2xx.get(s.name)! + res.non2xx);
      line.push(`${s.name} ${Math.round(res.rps)}`);
    }
    console.error(`  ${scenario.name} round ${r + 1}/${ROUNDS}: ${line.join(', ')}`);
  }
  return { scenario, rounds, cpu, non2xx };
}

const uptime = () =>
  execFileSync('uptime', { encoding: 'utf8' })
    .trim()
    .replace(/^.*load average/, 'load average');

/** Columns in this order: the rounds and CPU cells list the servers a scenario ran, in it. */
const COLUMNS = ['orderline', 'mercurius', 'yoga', 'apollo', 'bare'] as const;

function table(results: Measured[]): string[] {
  const lines = [
    '| scenario | orderline req/s | Mercurius 16 (jit) + armor | Yoga 5 + armor | Apollo Server 5 + armor | bare graphql-http (reference) | ' +
      'ratio vs better of Yoga and Apollo | target | met | ratio vs Mercurius | ratio vs Apollo | ' +
      'server CPU µs/request (orderline / Mercurius / Yoga / Apollo / bare); CPU ratios vs better of Yoga and Apollo, vs Mercurius, vs Apollo | ' +
      'rounds (req/s, orderline / Mercurius / Yoga / Apollo / bare) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const m of results) {
    const med = (n: ServerName) => (m.rounds.has(n) ? median(m.rounds.get(n)!) : undefined);
    const ours = med('orderline')!;
    const ratio = ours / Math.max(med('yoga')!, med('apollo')!);
    const ratioTo = (n: ServerName) => (med(n) === undefined ? 'n/a' : (ours / med(n)!).toFixed(2));
    const cell = (n: ServerName) => (med(n) === undefined ? 'n/a' : `${Math.round(med(n)!)}${m.non2xx.get(n) ? ` (${m.non2xx.get(n)} non-2xx)` : ''}`);
    const ran = COLUMNS.filter((n) => m.rounds.has(n));
    const rounds = ran.map((n) => m.rounds.get(n)!.map(Math.round).join(' ')).join(' / ');
    const cpuMed = (n: ServerName) => median(m.cpu.get(n)!);
    const cpuCells = ran.map((n) => Math.round(cpuMed(n))).join(' / ');
    const cpuRatio = (peer: number) => (peer / cpuMed('orderline')).toFixed(2);
    const cpuRatios = [Math.min(cpuMed('yoga'), cpuMed('apollo')), cpuMed('mercurius'), cpuMed('apollo')].map(cpuRatio).join(' / ');
    lines.push(
      `| ${m.scenario.name}: ${m.scenario.what} | ${cell('orderline')} | ${cell('mercurius')} | ${cell('yoga')} | ${cell('apollo')} | ${cell('bare')} | ` +
        `${ratio.toFixed(2)} | >= ${m.scenario.target.toFixed(1)} | ${ratio >= m.scenario.target ? 'yes' : 'no'} | ${ratioTo('mercurius')} | ${ratioTo('apollo')} | ` +
        `${cpuCells}; ${cpuRatios} | ${rounds} |`,
    );
  }
  return lines;
}

/** The apq scenario's hash-only request against the same process's text request, timed in the same rounds. */
function apqAgainstText(results: Measured[]): string[] {
  const m = results.find((r) => r.scenario.name === 'apq' && r.cpu.has('orderline-text'));
  if (!m) return [];
  const [apq, text] = [m.cpu.get('orderline')!, m.cpu.get('orderline-text')!];
  const [apqRps, textRps] = [m.rounds.get('orderline')!, m.rounds.get('orderline-text')!];
  const pairs = apq.map((a, i) => `${Math.round(a)}/${Math.round(text[i])}`).join(', ');
  return [
    `Hash-only APQ against the same query as text, same orderline process, same rounds: ${Math.round(median(apq))} µs against ${Math.round(median(text))} µs ` +
      `of server CPU per request (APQ/text ${(median(apq) / median(text)).toFixed(2)}; rounds APQ/text ${pairs}), ` +
      `${Math.round(median(apqRps))} against ${Math.round(median(textRps))} req/s.`,
    '',
  ];
}

const START = '<!-- graphql-peers -->';
const END = '<!-- /graphql-peers -->';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.some((a) => a !== '--write')) throw new Error('usage: bench/graphql-peers.ts [--write]');
  if (!existsSync(serviceEntry)) throw new Error('dist/src/main.js is missing: run npm run build first');
  process.env.NODE_ENV = 'production'; // inherited by every server started below
  const before = uptime();
  const servers = await startAll();
  try {
    const notes = await verify(servers);
    for (const n of notes) console.error(`verified: ${n}`);
    const results: Measured[] = [];
    for (const sc of SCENARIOS) results.push(await measure(servers, sc));
    const after = uptime();
    const cpu = cpus();
    const section = [
      '',
      `Last run: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores, Node ${process.version}; ` +
        `wrk 1 thread ${CONNECTIONS} connections, ${WARMUP} s warm-up, ${ROUNDS} x ${SECONDS} s rounds per server in rotating order, medians; ` +
        `${before} before, ${after} after.`,
      '',
      ...table(results),
      '',
      ...apqAgainstText(results),
      'Checked before timing (same `data` as the service for the text and the APQ request; the over-cost query refused):',
      '',
      ...notes.map((n) => `- ${n}`),
      '',
    ];
    console.log(section.join('\n'));
    if (args.includes('--write')) {
      editBenchmarks((md) => replaceBetween(md, START, END, section.join('\n')));
      console.log('bench: updated the GraphQL peers section of BENCHMARKS.md');
    }
  } finally {
    await Promise.all([...new Set(servers.map((s) => s.running))].map((r) => r.stop()));
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
