/**
 * Reconnect storm: `npm run storm -- [settings] [--write]` (the npm script builds first).
 * The service as `npm start` runs it (embedded: SQLite, in-process bus), N WebSocket
 * subscribers over a few orders held by forked client processes (bench/soak/client.ts,
 * which know only the contract: resume with `since`, every message judged by the wire
 * rule, a refusal's Retry-After honoured as the SDK does), writes going on the whole time
 * and a probe timing a connected client's GETs. Once all N are live, the instance is
 * restarted on the same port and data, and the storm of N reconnects is measured:
 *
 * - `sigterm`: graceful shutdown (503 + Connection: close to what arrives, streams closed
 *   with 1001), then the new process;
 * - `kill`: kill -9, then the new process;
 * - `capacity`: kill -9 into an instance with the accept limiter lifted
 *   (ACCEPT_RATE=1000000): how many subscriptions per second the instance admits.
 *
 * For each: time until every subscriber is back (from the signal and from the new instance
 * answering), 503s per client, events lost, duplicated or resynced, requests unanswered
 * while it restarted, the probe's p50/p99/max while the subscribers came back; at the end
 * every order is read back (failed writes must not have been applied) and every subscriber
 * must stand at its order's final revision. Targets are printed met or missed; `--sizes
 * 2500,5000,10000` runs it once per size, a row each; `--write` rewrites the "Reconnect
 * storm, measured" part of BENCHMARKS.md's Reliability section. `--help` lists every
 * setting. Exit code 1 when a target was missed.
 *
 * The subscribers are first opened against an instance with the limiter lifted (setup
 * only: the first restart brings up the limiter under test). 10,000 subscribers need as
 * many fds in the server and about N / client processes in each client: raise
 * `ulimit -n` (e.g. `ulimit -n 65536`) when the bench says it is too low.
 */
import { existsSync, readFileSync } from 'node:fs';
import { editBenchmarks, environment } from './lib/report';
import { serviceEntry, targetOverride } from './lib/server';
import { restartDeployment, startDeployment, stopAll, type Deployment, type Restart } from './lib/deployment';
import { nowUs } from './lib/realtime-hist';
import type { SubReport, SubSpec } from './soak/client';
import { Load, NoAnswer, type Attempt } from './soak/load';
import { addCounts, zeroCounts, type SeqCounts } from './soak/seqs';
import { Subscribers } from './soak/subscribers';
import { passed, renderTargets, streamTargets, type Target } from './soak/verdict';
import { settingsOf, usage, type ScenarioName, type Settings } from './storm/settings';
import { admissionOf, latencyBetween, outcomesBetween, quantile, recoveryOf, refusalsOf, stormTargets, type StormResult } from './storm/verdict';
import { stormPart, writeStorm, type SizeResult } from './storm/report';

const log = (s: string) => console.error(`storm ${new Date().toISOString().slice(11, 19)} ${s}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const LIFTED = { ACCEPT_RATE: '1000000', ACCEPT_BURST: '1000000' };
const SIGNAL: Record<ScenarioName, NodeJS.Signals> = { sigterm: 'SIGTERM', kill: 'SIGKILL', capacity: 'SIGKILL' };

/** The soft limit on open files of this process (the server and the clients inherit it). */
function openFilesLimit(): number {
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return !m || m[1] === 'unlimited' ? Infinity : Number(m[1]);
}

/** The probe: one client's GETs of an order at `rate` per second on kept-alive connections, each timed. */
class Probe {
  readonly attempts: Attempt[] = [];
  private timer?: NodeJS.Timeout;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly client: Load,
    private readonly orderIds: number[],
  ) {}

  start(rate: number): void {
    let k = 0;
    this.timer = setInterval(() => {
      const id = this.orderIds[k++ % this.orderIds.length];
      const sentAt = Date.now();
      const t = nowUs();
      const p = this.client.send('GET', `/orders/${id}`).then(
        (a) => void this.attempts.push({ kind: 'read', sentAt, doneAt: Date.now(), ms: (nowUs() - t) / 1000, status: a.status, opened: a.opened }),
        (err: unknown) => void this.attempts.push({ kind: 'read', sentAt, doneAt: Date.now(), ms: (nowUs() - t) / 1000, code: err instanceof NoAnswer ? err.code : 'error' }),
      );
      this.pending.add(p);
      void p.finally(() => this.pending.delete(p));
    }, 1000 / rate);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.allSettled([...this.pending]);
  }
}

/** Polls `ok` every 250 ms until it holds or `ms` pass; resolves with whether it held. */
async function until(ok: () => Promise<boolean>, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; ; await sleep(250)) {
    if (await ok()) return true;
    if (Date.now() > deadline) return false;
  }
}

function diffCounts(after: SeqCounts, before: SeqCounts): SeqCounts {
  const out = { ...after };
  for (const k of Object.keys(out) as (keyof SeqCounts)[]) out[k] -= before[k];
  return out;
}

async function storm(s: Settings, n: number, name: ScenarioName, d: Deployment, subs: Subscribers, load: Load, writes: Attempt[], probe: Probe, since: number): Promise<StormResult> {
  const env = name === 'capacity' ? LIFTED : s.acceptDefaults ? { ACCEPT_RATE: undefined, ACCEPT_BURST: undefined } : { ACCEPT_RATE: String(s.acceptRate), ACCEPT_BURST: String(s.acceptBurst) };
  const before = (await subs.stats()).counts;
  await subs.all({ cmd: 'mark' });
  const restart: Restart = await restartDeployment(d, SIGNAL[name], env);
  log(
    `${name}: ${restart.signal} at 0, exited at ${((restart.exitedAt - restart.signalAt) / 1000).toFixed(2)} s, ` +
      `new instance answering at ${((restart.listeningAt - restart.signalAt) / 1000).toFixed(2)} s (started in ${((restart.listeningAt - restart.startedAt) / 1000).toFixed(2)} s)`,
  );
  let last = 0;
  const allBack = await until(async () => {
    const st = await subs.storm();
    if (Date.now() - last > 5000) {
      last = Date.now();
      log(`${name}: ${st.backAt.length} of ${n} back, ${st.refused.reduce((a, b) => a + b, 0)} refusals so far`);
    }
    return st.backAt.length >= n;
  }, s.timeout * 1000);
  const sample = await subs.storm();
  const offered = await subs.attempts();
  const perS = Array.from({ length: 6 }, (_, k) => offered.at.filter((t) => t >= restart.listeningAt + k * 1000 && t < restart.listeningAt + (k + 1) * 1000).length);
  log(
    `${name}: connection attempts ${offered.at.length} (${offered.at.filter((t) => t < restart.listeningAt).length} before the new instance answered; per second after: ${perS.join(', ')}); ` +
      `reconnect timers late p50 ${quantile(offered.lateMs, 0.5).toFixed(0)} / p99 ${quantile(offered.lateMs, 0.99).toFixed(0)} / max ${Math.max(0, ...offered.lateMs).toFixed(0)} ms`,
  );
  const recovery = recoveryOf(n, sample.backAt, restart);
  const recoveredAt = recovery.allBackAt ?? Date.now();
  // Caught up: every subscriber at (or past) its order's revision as read now, writes going on.
  const heads = (await load.verify()).heads;
  const caughtUp = (await subs.all<boolean>({ cmd: 'settle', heads, ms: s.timeout * 1000 })).every(Boolean);
  const after = (await subs.stats()).counts;
  const settledSample = await subs.storm();
  const acceptRate = name === 'capacity' ? Number(LIFTED.ACCEPT_RATE) : s.acceptRate;
  const acceptBurst = name === 'capacity' ? Number(LIFTED.ACCEPT_BURST) : s.acceptBurst;
  const r: StormResult = {
    scenario: name,
    clients: n,
    acceptRate,
    acceptBurst,
    restart,
    recovery,
    refusals: refusalsOf(sample.refused),
    otherFailures: sample.failed,
    admission: admissionOf(sample.backAt),
    counts: diffCounts(after, before),
    affected: { lost: settledSample.withLost, duplicated: settledSample.withDuplicates, resynced: settledSample.withResyncs },
    caughtUp,
    probeRestart: outcomesBetween(probe.attempts, restart.signalAt, restart.listeningAt),
    writesRestart: outcomesBetween(writes, restart.signalAt, restart.listeningAt),
    probeBefore: latencyBetween(probe.attempts, since, restart.signalAt),
    probeRecovery: latencyBetween(probe.attempts, restart.listeningAt, recoveredAt),
  };
  log(`${name}: ${allBack ? 'all back' : `NOT all back within ${s.timeout} s`}; ${caughtUp ? 'all caught up' : 'NOT all caught up'}`);
  return r;
}

async function runSize(s: Settings, n: number): Promise<SizeResult> {
  const d = await startDeployment('embedded', 1, LIFTED);
  log(`${d.label} at ${d.srv.url} (pid ${d.srv.pid}); ${n} subscribers over ${s.orders} orders in ${s.clientProcs} processes at nice ${s.clientsNice}`);
  const subs = Subscribers.start(s.clientProcs, s.clientsNice);
  const load = new Load([d.srv.url], d.token);
  const probeClient = new Load([d.srv.url], d.token);
  const writes: Attempt[] = [];
  load.onAttempt = (a) => void (a.kind === 'update' && writes.push(a));
  try {
    await load.seed(s.orders);
    const specs: SubSpec[] = Array.from({ length: n }, (_, i) => ({ kind: 'ws', orderId: load.orders[i % s.orders].id, start: 1, home: 0 }));
    const t0 = Date.now();
    await subs.all((p) => ({
      cmd: 'open',
      subs: specs.filter((_, k) => k % s.clientProcs === p),
      urls: [d.srv.url],
      token: d.token,
      backoff: { baseMs: s.backoffMs, capMs: s.backoffCapMs },
      concurrency: 50,
    }));
    if (!(await until(async () => (await subs.stats()).connected >= n, s.timeout * 1000))) throw new Error(`not all ${n} subscribers connected within ${s.timeout} s`);
    const openS = (Date.now() - t0) / 1000;
    log(`${n} subscribers live in ${openS.toFixed(1)} s`);

    const probe = new Probe(
      probeClient,
      load.orders.map((o) => o.id),
    );
    load.start({ writes: s.writes, reads: 0, lists: 0, graphql: 0, conditionalShare: 0, createShare: 0 });
    probe.start(s.probe);
    let since = Date.now();
    await sleep(5000);
    const storms: StormResult[] = [];
    for (const name of s.scenarios) {
      if (!(await until(async () => (await subs.stats()).connected >= n, s.timeout * 1000))) throw new Error(`not all ${n} subscribers live before ${name}`);
      await sleep(2000);
      storms.push(await storm(s, n, name, d, subs, load, writes, probe, since));
      since = Date.now();
    }

    await load.stop();
    await probe.stop();
    log('writes stopped; reading every order back');
    const verified = await load.verify();
    const settled = (await subs.all<boolean>({ cmd: 'settle', heads: verified.heads, ms: s.settle * 1000 })).every(Boolean);
    const reports = await subs.all<SubReport>({ cmd: 'report', heads: verified.heads });
    const st = await subs.stats();
    const total = reports.reduce((c, r) => addCounts(c, r.byKind.ws), zeroCounts());
    const behind = reports.reduce((a, r) => a + r.behind, 0);
    const b = load.book;
    const writeStatuses: Record<string, number> = {};
    for (const a of writes) {
      const k = a.status !== undefined ? String(a.status) : (a.code ?? 'error');
      writeStatuses[k] = (writeStatuses[k] ?? 0) + 1;
    }
    const finalTargets: Target[] = [
      ...streamTargets({ counts: { ...total, subscribers: n }, behind, unknown: st.unknown }),
      {
        name: 'failed writes not applied, acknowledged ones all there',
        value:
          `${b.acked + b.unackedAppliedBefore + b.unackedAppliedOnRetry} writes acknowledged (${b.unackedAppliedOnRetry} after a failed attempt, ${b.unackedAppliedBefore} found applied after a lost answer); ` +
          `${b.refusedAttempts} attempts refused (503 or connection refused), ${b.refusedButApplied} of those applied; ` +
          `${verified.orders} orders read back, ${verified.wrongState.length} not as acknowledged; ${b.conflicts} unexplained 412, ${b.anomalies.length} anomalies`,
        goal: 'refused attempts never applied, every order as acknowledged',
        met: b.refusedButApplied === 0 && verified.wrongState.length === 0 && b.conflicts === 0 && b.anomalies.length === 0,
      },
    ];
    const notes = [...reports.flatMap((r) => r.notes), ...b.anomalies, ...verified.wrongState].slice(0, 10);
    return { clients: n, openS, storms, finalTargets, settled, writeStatuses, probeStatuses: outcomesBetween(probe.attempts, 0, Infinity), notes, label: d.label };
  } finally {
    await subs.all({ cmd: 'close' }).catch(() => undefined);
    await subs.stop().catch(() => undefined);
    load.close();
    probeClient.close();
    await stopAll();
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help')) {
    console.log(`usage: npm run storm -- [settings]\n${usage()}`);
    return;
  }
  const s = settingsOf(args, process.env);
  if (targetOverride) throw new Error("bench/storm.ts restarts the service's own deployment: unset BENCH_TARGET_CMD");
  if (!existsSync(serviceEntry)) throw new Error('dist/src/main.js is missing: run npm run build first');
  const fds = openFilesLimit();
  const biggest = Math.max(...s.sizes);
  if (fds < biggest + 1024) throw new Error(`ulimit -n is ${fds}: ${biggest} subscribers need about ${biggest + 1024} open files in the server; raise it (e.g. ulimit -n 65536) and run again`);
  const onSignal = () => void stopAll().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const results: SizeResult[] = [];
  for (const n of s.sizes) {
    const r = await runSize(s, n);
    results.push(r);
    console.log(`\nstorm verdict, ${n} subscribers:\n${renderTargets(targetsOf(s, r)).join('\n')}`);
  }
  const part = stormPart({ settings: s, env: environment(), results });
  console.log(`\n${part}`);
  if (s.write) {
    editBenchmarks((text) => writeStorm(text, part));
    console.log('storm: wrote the "Reconnect storm, measured" part of the Reliability section of BENCHMARKS.md');
  }
  if (!results.every((r) => passed(targetsOf(s, r)))) process.exitCode = 1;
}

/** Every target of one size: each storm's (named after it), then the run's. */
function targetsOf(s: Settings, r: SizeResult): Target[] {
  const goals = { refusals: s.goalRefusals, backS: s.goalBackS, p99Ms: s.goalP99Ms };
  return [...r.storms.flatMap((x) => stormTargets(x, goals).map((t) => ({ ...t, name: `${x.scenario}: ${t.name}` }))), ...r.finalTargets];
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`storm: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  });
}
