/**
 * The soak's part of BENCHMARKS.md: a "Reliability" section with one marked part per
 * scenario (embedded, pg-redis, pg-redis-failover), so a run rewrites only its own.
 */
import { cell, replaceBetween, sectionOf } from '../lib/report';
import type { SubStats } from './client';
import type { KindStats, ReqKind } from './load';
import type { SeqCounts } from './seqs';
import type { Settings } from './settings';
import { levelOf, type Sample } from './trend';
import { outcomeOf, type Target } from './verdict';

export type ScenarioName = 'embedded' | 'pg-redis' | 'pg-redis-failover' | 'pg-redis-outage-postgres' | 'pg-redis-outage-redis';
export const SCENARIOS: ScenarioName[] = ['embedded', 'pg-redis', 'pg-redis-failover', 'pg-redis-outage-postgres', 'pg-redis-outage-redis'];

export const scenarioOf = (s: Pick<Settings, 'mode' | 'failover' | 'outage'>): ScenarioName =>
  s.mode === 'embedded' ? 'embedded' : s.failover ? 'pg-redis-failover' : s.outage !== 'none' ? `pg-redis-outage-${s.outage}` : 'pg-redis';

export const markers = (name: ScenarioName) => ({ start: `<!-- reliability-${name}:start -->`, end: `<!-- reliability-${name}:end -->` });

const TITLES: Record<ScenarioName, string> = {
  embedded: 'Soak with churn, embedded',
  'pg-redis': 'Soak with churn, two instances on PostgreSQL + Redis',
  'pg-redis-failover': 'Failover under load: kill -9 one of two instances',
  'pg-redis-outage-postgres': 'PostgreSQL going away under load',
  'pg-redis-outage-redis': 'Redis going away under load',
};

/** The section as it is first written: the method, and each scenario's part not measured yet. */
export const SECTION = `## Reliability

A soak any operator can run (\`bench/soak.ts\`): mixed load with subscriber churn for as
long as asked, every client following only the contract, each target met or missed with
its number. \`--write\` rewrites the part of the scenario it ran; \`npm run soak -- --help\`
lists every setting (each also an environment variable \`SOAK_<NAME>\`).

\`\`\`sh
npm run soak -- --write                                    # embedded, 45 min: 15 warm-up, 30 judged (builds first)
npm run soak -- --mode pg-redis --write                    # two instances, PostgreSQL + Redis
npm run soak -- --mode pg-redis --failover --write         # and kill -9 one half-way
npm run soak -- --mode pg-redis --outage postgres --duration 150 --warmup 30 --write   # PostgreSQL away for 10 s (or --outage redis)
npm run soak -- --duration 60 --warmup 20 --ws 200 --sse 50   # a smoke run
\`\`\`

- **Subscribers** (forked processes, \`bench/soak/client.ts\`): WebSocket and SSE, one order
  each, resuming with their last seq (\`since\`, \`Last-Event-ID\`) after every cut, judged by
  the contract's wire rule: an event seq = last + 1 is applied, seq <= last is a duplicate
  (or a late one filling an earlier gap: out of order), seq > last + 1 a gap whose missing
  seqs are lost until they arrive; a \`resync\` is counted apart. At the end each
  subscriber's last seq must equal its order's final revision (read back by GraphQL).
  \`--churn\` percent of them are cut from the client side every second and resume after
  the contract's backoff with jitter.
- **Load** (this process, open loop): reads and conditional reads (If-None-Match), lists,
  GraphQL queries, updates (PATCH with If-Match, one writer per order) and creates (POST
  with Idempotency-Key). A write whose answer is lost is resent to the other instance:
  the If-Match chain or the Idempotency-Key replay tells whether it had been applied. At
  the end every order is read back: its revision and last note must be what the
  acknowledged writes say, and each create's unique note must be listed exactly once.
- **Memory**: every \`--sample\` seconds each server's RSS (\`/proc/<pid>/status\`), open
  fds (\`/proc/<pid>/fd\`) and V8 heap used (\`nodejs_heap_size_used_bytes\` from
  \`--metrics-url\`, default \`{metrics}/metrics\`, the operator listener each instance's banner names,
  with \`METRICS_TOKEN\` from \`SOAK_SERVER_ENV\` when set; heap is "not measured" when it does not answer).
  Targets: after \`--warmup\`, a least-squares slope under \`--slope-limit-mb\` MB per 10
  minutes; after the load stops and the subscribers close, within \`--return-pct\` % of the
  warm level (the first minute after warm-up) and fds back to the idle count (taken
  before any subscriber). Warm-up should cover the replay rings filling (REPLAY_RATE x
  REPLAY_WINDOW_S events per order at its updates per second: about 13 minutes with the
  defaults, hence the 15-minute default warm-up; the soak warns when it does not).
  \`SOAK_SERVER_ENV="K=V ..."\` adds server settings. \`--heap-snapshots\`
  starts the servers with \`--heapsnapshot-signal=SIGUSR2\` and takes one after warm-up
  and one at the end of the load, to compare in Chrome DevTools.

${SCENARIOS.map((n) => `${markers(n).start}\n### ${TITLES[n]}\n\nNot measured yet.\n${markers(n).end}`).join('\n\n')}
`;

/** Writes `part` as scenario `name`'s part of the Reliability section, adding the section first when missing. */
export function writeReliability(text: string, name: ScenarioName, part: string): string {
  if (sectionOf(text, 'Reliability') === undefined) text = `${text.trimEnd()}\n\n${SECTION}`;
  const m = markers(name);
  return replaceBetween(text, m.start, m.end, part);
}

/** The command that repeats a run with these settings. */
export function commandOf(s: Settings): string {
  const flags = [
    `--mode ${s.mode}`,
    ...(s.failover ? [`--failover --failover-at ${s.failoverAt}`] : []),
    ...(s.outage !== 'none' ? [`--outage ${s.outage} --outage-at ${s.outageAt} --outage-for ${s.outageFor}`] : []),
    `--duration ${s.duration}`,
    `--warmup ${s.warmup}`,
    `--ws ${s.ws}`,
    `--sse ${s.sse}`,
    `--orders ${s.orders}`,
    `--churn ${s.churn}`,
    `--writes ${s.writes}`,
    `--reads ${s.reads}`,
    `--lists ${s.lists}`,
    `--graphql ${s.graphql}`,
  ];
  return `npm run soak -- ${flags.join(' ')}`;
}

export interface PartInput {
  scenario: ScenarioName;
  settings: Settings;
  env: string;
  label: string;
  seconds: number;
  targets: Target[];
  kinds: Record<'ws' | 'sse', SeqCounts & { subscribers: number }>;
  stats: SubStats;
  settled: boolean;
  notes: string[];
  anomalies: string[];
  latency: (Pick<KindStats, 'sent' | 'statuses' | 'noAnswer' | 'skipped'> & { kind: ReqKind; p50: number; p99: number; max: number })[];
  failedOverAt?: number;
  /** Seconds: where the trend starts (after warm-up, and a minute after a failover); the warm level is its first minute. */
  trendFrom: number;
  snapshots?: string;
  memory: { name: string; samples: Sample[]; idleFds: number; alive: boolean }[];
}

const MB = (b: number) => (Number.isNaN(b) ? 'n/a' : `${(b / 1048576).toFixed(1)}`);
const fmtMap = (m: Record<string, number>) =>
  Object.entries(m)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ') || 'none';

/** The markdown of one run: command, settings, targets, then the figures behind them. */
export function reliabilityPart(p: PartInput): string {
  const s = p.settings;
  const st = p.stats;
  const out = [
    `### ${TITLES[p.scenario]}`,
    '',
    `Last run: ${p.env}; ${p.label}; ${Math.round(p.seconds)} s of load${p.failedOverAt === undefined ? '' : `, instance A killed (SIGKILL) at ${Math.round(p.failedOverAt)} s`}.`,
    '',
    `\`${commandOf(s)}\` (conditional share ${s.conditionalShare}, create share ${s.createShare}, sample ${s.sample} s, cooldown ${s.cooldown} s, backoff ${s.backoffMs} ms, ${s.clientProcs} subscriber processes).`,
    '',
    '| target | outcome | measured | goal |',
    '|---|---|---|---|',
    ...p.targets.map((t) => `| ${cell(t.name)} | ${outcomeOf(t)} | ${cell(t.value)} | ${cell(t.goal)} |`),
    '',
    '| subscribers | count | delivered | lost | duplicated | out of order | gaps | resyncs (seqs skipped) |',
    '|---|---|---|---|---|---|---|---|',
    ...(['ws', 'sse'] as const).map((k) => {
      const c = p.kinds[k];
      return `| ${k === 'ws' ? 'WebSocket' : 'SSE'} | ${c.subscribers} | ${c.delivered} | ${c.lost} | ${c.duplicates} | ${c.outOfOrder} | ${c.gaps} | ${c.resyncs} (${c.resyncSkipped}) |`;
    }),
    '',
    `Connections: ${st.connects} subscribed (${st.churned} cut by churn), ${st.failedConnects} attempts failed (refusals ${fmtMap(st.refusals)}); ` +
      `closed by the server or network: ${fmtMap(st.closes)}; \`error\` messages: ${fmtMap(st.errors)}; ${st.gets} GETs on a gap or resync (${st.getFailures} failed); ` +
      `subscribers ${p.settled ? 'all settled at their final revision' : 'NOT all settled'} at the end.`,
    '',
    '| requests | sent | statuses | no answer | skipped (64 in flight) | p50 ms | p99 ms | max ms |',
    '|---|---|---|---|---|---|---|---|',
    ...p.latency.map((l) => `| ${l.kind} | ${l.sent} | ${cell(fmtMap(l.statuses))} | ${l.noAnswer} | ${l.skipped} | ${l.p50.toFixed(1)} | ${l.p99.toFixed(1)} | ${l.max.toFixed(1)} |`),
    '',
    '| server | idle fds | RSS MB start / warm / end of load / after | heap MB start / warm / end of load / after | fds end of load / after |',
    '|---|---|---|---|---|',
    ...p.memory.map((m) => {
      const first = m.samples[0];
      const warm = (f: 'rss' | 'heap') => levelOf(m.samples, f, p.trendFrom, p.trendFrom + 60);
      const at = (f: 'rss' | 'heap' | 'fds', t: number) => [...m.samples].reverse().find((x) => x.t <= t && x[f] !== undefined)?.[f] ?? NaN;
      const lastT = m.samples.at(-1)?.t ?? 0;
      return (
        `| ${m.name}${m.alive ? '' : ' (killed)'} | ${m.idleFds} | ${MB(first?.rss ?? NaN)} / ${MB(warm('rss'))} / ${MB(at('rss', p.seconds))} / ${MB(at('rss', lastT))} | ` +
        `${MB(first?.heap ?? NaN)} / ${MB(warm('heap'))} / ${MB(at('heap', p.seconds))} / ${MB(at('heap', lastT))} | ${at('fds', p.seconds)} / ${at('fds', lastT)} |`
      );
    }),
  ];
  if (s.outage !== 'none') out.push('', 'Memory is not judged in an outage run (the soak scenarios judge it); the samples above are for reference.');
  else if (s.duration - s.warmup < 1800)
    out.push('', `Smoke-sized run: ${Math.round(s.duration - s.warmup)} s after warm-up, not the 30 minutes the memory targets are stated for; its trend figures show the harness works, not that memory is flat.`);
  if (p.snapshots) out.push('', `Heap snapshots: ${p.snapshots}.`);
  if (p.notes.length || p.anomalies.length) out.push('', 'First findings:', '', ...[...p.notes, ...p.anomalies].map((n) => `- ${n}`));
  return out.join('\n');
}
