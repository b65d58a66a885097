/**
 * The storm's part of BENCHMARKS.md: "### Reconnect storm, measured" in the Reliability
 * section, between its own markers, beside the simulated storm (which it does not replace:
 * that one pins the limiter's rule on a simulated clock, this one measures a real instance).
 */
import { cell, replaceBetween, sectionOf } from '../lib/report';
import { SECTION } from '../soak/report';
import { outcomeOf, type Target } from '../soak/verdict';
import { commandOf, type Settings } from './settings';
import { fmt, stormTargets, unanswered, type Goals, type StormResult } from './verdict';

export const MARKERS = { start: '<!-- reliability-storm:start -->', end: '<!-- reliability-storm:end -->' };
export const TITLE = '### Reconnect storm, measured';

/** One size's run. */
export interface SizeResult {
  clients: number;
  label: string;
  /** Seconds to open every subscriber (limiter lifted). */
  openS: number;
  storms: StormResult[];
  /** The run's own targets (the end: streams and writes). */
  finalTargets: Target[];
  settled: boolean;
  /** Every write attempt's and probe request's outcome, over the whole run. */
  writeStatuses: Record<string, number>;
  probeStatuses: Record<string, number>;
  notes: string[];
}

/**
 * Writes `part` between the storm's markers; the first time, the marked part goes at the
 * end of the Reliability section (after the simulated storm), the section added if missing.
 */
export function writeStorm(text: string, part: string): string {
  if (!text.includes(MARKERS.start)) {
    if (sectionOf(text, 'Reliability') === undefined) text = `${text.trimEnd()}\n\n${SECTION}`;
    const start = text.search(/^## Reliability\s*$/m);
    const next = text.slice(start + 1).search(/^## /m);
    const at = next < 0 ? text.length : start + 1 + next;
    const before = text.slice(0, at).trimEnd();
    const after = text.slice(at);
    text = `${before}\n\n${MARKERS.start}\n${MARKERS.end}\n${after ? `\n${after}` : ''}`;
  }
  return replaceBetween(text, MARKERS.start, MARKERS.end, part);
}

const s1 = (x: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(1));
const n0 = (x: number) => (Number.isNaN(x) ? 'n/a' : Math.round(x).toLocaleString('en-US'));

/** A storm's row of the table. */
export function stormRow(r: StormResult): string {
  const rec = r.recovery;
  const back = rec.allBackAt === undefined ? `${rec.back} of ${rec.dropped} back` : `${s1(rec.fromSignalS)} / ${s1(rec.fromListeningS)}`;
  const limiter = r.scenario === 'capacity' ? 'lifted' : `${r.acceptRate} / ${r.acceptBurst}`;
  const down = `${s1((r.restart.listeningAt - r.restart.signalAt) / 1000)}`;
  const a = r.affected;
  const lost = `${r.counts.lost} (${a.lost}) / ${r.counts.duplicates} (${a.duplicated}) / ${r.counts.resyncs} (${a.resynced})${r.caughtUp ? '' : ' (not caught up)'}`;
  const p = r.probeRecovery;
  return (
    `| ${r.clients.toLocaleString('en-US')} | ${r.scenario} | ${limiter} | ${down} | ${back} | ${r.refusals.mean.toFixed(2)} / ${r.refusals.max} / ${r.refusals.total} | ${r.otherFailures} | ` +
    `${n0(r.admission.peakPerS)} / ${n0(r.admission.meanPerS)} | ${s1(p.p50)} / ${s1(p.p99)} / ${s1(p.max)} (${s1(r.probeBefore.p99)}) | ${lost} | ` +
    `${unanswered(r.probeRestart)}; ${unanswered(r.writesRestart)} |`
  );
}

export const TABLE_HEAD = [
  '| clients | storm | ACCEPT_RATE / BURST | down (s) | all back (s): after the signal / after the new instance answered | 503s per client: mean / max / total | other failed attempts | admitted per s: peak / sustained | probe ms while they came back: p50 / p99 / max (p99 before) | events lost / dup / resyncs (subscribers) | unanswered while restarting: probe; writes |',
  '|---:|---|---|---:|---|---|---:|---|---|---|---|',
];

/** The accept capacity from the capacity storms, and what the target asks of ACCEPT_RATE (for the largest size). */
export function capacityLines(results: SizeResult[], goals: Goals): string[] {
  const caps = results.flatMap((r) => r.storms.filter((x) => x.scenario === 'capacity' && Number.isFinite(x.admission.meanPerS)));
  if (caps.length === 0) return [];
  const best = caps.reduce((a, b) => (b.admission.meanPerS > a.admission.meanPerS ? b : a));
  const n = Math.max(...results.map((r) => r.clients));
  const needed = Math.ceil(n / goals.backS);
  return [
    `Accept capacity (limiter lifted, ACCEPT_RATE=1000000, a kill -9 storm): ${caps.map((c) => `${n0(c.admission.meanPerS)} subscriptions/s sustained (peak ${n0(c.admission.peakPerS)} in one second) at ${c.clients.toLocaleString('en-US')} clients, probe p99 ${s1(c.probeRecovery.p99)} ms meanwhile`).join('; ')}. ` +
      `Bringing ${n.toLocaleString('en-US')} back within ${goals.backS} s needs about ${n.toLocaleString('en-US')} / ${goals.backS} = ${needed} admissions per second (ACCEPT_RATE ${needed}, ACCEPT_BURST ${2 * needed}: the limiter promises places at min(rate, burst / 2)), ` +
      `${Math.round((needed / best.admission.meanPerS) * 100)} % of the best sustained rate measured here.`,
  ];
}

export interface PartInput {
  settings: Settings;
  env: string;
  results: SizeResult[];
}

/** The markdown of a run: command, settings, one row per storm and size, the largest size's targets. */
export function stormPart(p: PartInput): string {
  const s = p.settings;
  const goals: Goals = { refusals: s.goalRefusals, backS: s.goalBackS, p99Ms: s.goalP99Ms };
  const largest = p.results.reduce((a, b) => (b.clients > a.clients ? b : a));
  const targets = (r: SizeResult) => [...r.storms.flatMap((x) => stormTargets(x, goals).map((t) => ({ ...t, name: `${x.scenario}: ${t.name}` }))), ...r.finalTargets];
  const out = [
    TITLE,
    '',
    `Last run: ${p.env}; ${largest.label}; \`${commandOf(s)}\` (${s.clientProcs} client processes at nice ${s.clientsNice}, backoff ${s.backoffMs} ms doubling up to ${s.backoffCapMs} ms, ` +
      `limiter ${s.acceptDefaults ? "the service's defaults" : 'set by flags'}: ACCEPT_RATE ${s.acceptRate}, ACCEPT_BURST ${s.acceptBurst}).`,
    '',
    'N WebSocket subscribers (`bench/soak/client.ts` in forked processes: resume with `since`, every message judged by the wire rule, a 503 waited out as the SDK does: its `Reconnects`, Retry-After plus up to 1 s, such a refusal not lengthening the backoff) ' +
      `over ${s.orders} orders; PATCHes with If-Match at ${s.writes}/s and a probe GETting an order at ${s.probe}/s on kept-alive connections the whole run. ` +
      'Once all are live the instance is restarted on the same port and data: `sigterm` (graceful: the drain answers what arrives with 503 + Connection: close, streams close with 1001), `kill` (kill -9), ' +
      '`capacity` (kill -9 into an instance with the limiter lifted, to measure how many subscriptions per second it admits). "Down" runs from the signal until the new instance answers; "sustained" is the rate while the middle 80 % came back. ' +
      'Subscribers are opened against an instance with the limiter lifted (setup only). ' +
      `Client processes share this machine's cores with the server, at nice ${s.clientsNice} (\`--clients-nice\`: they take the CPU the server leaves, as clients on other machines would; at 0 they kept the server waiting for a core).`,
    '',
    ...TABLE_HEAD,
    ...p.results.flatMap((r) => r.storms.map(stormRow)),
    '',
    `Requests while the instance restarted (signal until the new instance answered), by outcome, at ${largest.clients.toLocaleString('en-US')}: ` +
      `${largest.storms.map((r) => `${r.scenario}: probe ${fmt(r.probeRestart)}; writes ${fmt(r.writesRestart)}`).join('. ')}. ` +
      'ECONNREFUSED was never sent (nothing listened); ECONNRESET was sent and got no answer; 503 is the drain refusing what arrived.',
    '',
    ...capacityLines(p.results, goals),
    '',
    `Targets at ${largest.clients.toLocaleString('en-US')} subscribers:`,
    '',
    '| target | outcome | measured | goal |',
    '|---|---|---|---|',
    ...targets(largest).map((t) => `| ${cell(t.name)} | ${outcomeOf(t)} | ${cell(t.value)} | ${cell(t.goal)} |`),
  ];
  for (const r of p.results.filter((x) => x !== largest)) {
    const missed = targets(r).filter((t) => t.met === false);
    out.push('', `At ${r.clients.toLocaleString('en-US')}: ${missed.length === 0 ? 'every target met' : `missed ${missed.map((t) => `${t.name} (${t.value})`).join('; ')}`}.`);
  }
  out.push(
    '',
    `Opening the subscribers took ${p.results.map((r) => `${s1(r.openS)} s (${r.clients.toLocaleString('en-US')})`).join(', ')}. ` +
      `Write attempts over the run at ${largest.clients.toLocaleString('en-US')}: ${fmt(largest.writeStatuses)}; probe: ${fmt(largest.probeStatuses)}.`,
  );
  const notes = p.results.flatMap((r) => r.notes.map((x) => `${r.clients}: ${x}`)).slice(0, 10);
  if (notes.length) out.push('', 'Findings:', '', ...notes.map((x) => `- ${x}`));
  return out.join('\n');
}
