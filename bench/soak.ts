/**
 * Soak: `npm run soak -- [settings] [--write]` (the npm script builds first). Hours of mixed
 * load with subscriber churn against the service as `npm start` runs it, every client
 * following only the contract, so lost and duplicated events are counted exactly:
 *
 * - `--mode embedded` (default): one process, SQLite, in-process bus.
 * - `--mode pg-redis`: two instances on one PostgreSQL schema and one Redis prefix; the
 *   load and the subscribers are spread over both. `--failover` kills one with SIGKILL at
 *   `--failover-at` seconds: its subscribers resume on the other, its lost answers are
 *   resent there (If-Match and Idempotency-Key say whether they had been applied).
 *   `--outage postgres|redis` runs them on a PostgreSQL and a Redis of the soak's own and
 *   stops that engine at `--outage-at` seconds for `--outage-for` seconds
 *   (bench/soak/outage.ts says what is judged).
 *
 * Load (open loop, this process): reads, conditional reads, lists, GraphQL queries,
 * updates (PATCH with If-Match) and creates (POST with Idempotency-Key), bench/soak/load.ts.
 * Subscribers (WebSocket and SSE, one order each) live in forked processes
 * (bench/soak/client.ts); `--churn` percent of them are cut and resume every second.
 * Every `--sample` seconds each server's RSS (/proc/<pid>/status), open fds (/proc/<pid>/fd)
 * and V8 heap (the `--metrics-url` scrape, when it answers) are recorded.
 *
 * At the end: writes read back, subscribers settled and judged against each order's final
 * revision, subscribers closed, `--cooldown` seconds of samples, then the verdict (each
 * target met or missed with its number); `--write` rewrites this scenario's part of the
 * "Reliability" section of BENCHMARKS.md. Exit code 1 when a target was missed.
 * `--help` lists every setting.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metric } from './lib/prometheus';
import { rssOf } from './lib/realtime-proc';
import { editBenchmarks, environment } from './lib/report';
import { serviceEntry, targetOverride, type Running } from './lib/server';
import { alive, startDeployment, startSibling, stopAll, type Deployment } from './lib/deployment';
import type { SubReport, SubSpec } from './soak/client';
import { Subscribers } from './soak/subscribers';
import { Load, REQ_KINDS } from './soak/load';
import { addCounts, zeroCounts } from './soak/seqs';
import { ringFillSeconds, settingsOf, usage, type Settings } from './soak/settings';
import type { Sample } from './soak/trend';
import { count5xx, memoryTargets, passed, renderTargets, streamTargets, type Target } from './soak/verdict';
import { reliabilityPart, writeReliability, scenarioOf, type ScenarioName } from './soak/report';
import { outageTargets, privateEngines, READY_AGAIN_S, watchReadiness, type OutageRecord, type PrivateEngines } from './soak/outage';
import type { Attempt } from './soak/load';

const log = (s: string) => console.error(`soak ${new Date().toISOString().slice(11, 19)} ${s}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** New stream connections are rate-limited by default (200/s): lifted, as in the other benches. */
const SERVER_ENV = { ACCEPT_RATE: '1000000', ACCEPT_BURST: '1000000' };

/** `SOAK_SERVER_ENV="K=V K=V"`: more environment for the servers (e.g. REPLAY_WINDOW_S, a metrics listener). */
function extraServerEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of (process.env.SOAK_SERVER_ENV ?? '').split(/\s+/).filter(Boolean)) {
    const i = kv.indexOf('=');
    if (i <= 0) throw new Error(`SOAK_SERVER_ENV: ${kv} is not K=V`);
    out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}

// ---- servers and their memory ---------------------------------------------------------------

interface Instance {
  name: string;
  srv: Running;
  pid: number;
  alive: boolean;
  samples: Sample[];
  idleFds: number;
  idleKinds: Map<string, number>;
  /** The fds of the last sample, by kind (read before its scrape opens a connection). */
  lastKinds: Map<string, number>;
}

const fdsOf = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

/** What each open fd is (`socket:[…]` collapsed to `socket`), counted: printed when fds did not come back. */
function fdKinds(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let link: string;
    try {
      link = readlinkSync(`/proc/${pid}/fd/${fd}`).replace(/:\[\d+\]$/, '');
    } catch {
      continue;
    }
    out.set(link, (out.get(link) ?? 0) + 1);
  }
  return out;
}

const fdDiff = (before: Map<string, number>, after: Map<string, number>): string =>
  [...new Set([...before.keys(), ...after.keys()])]
    .filter((k) => (before.get(k) ?? 0) !== (after.get(k) ?? 0))
    .map((k) => `${k} ${before.get(k) ?? 0} -> ${after.get(k) ?? 0}`)
    .join(', ');

/** GET on a connection of its own, closed after the answer (a kept-alive scrape would hold one of the server's fds). */
function scrape(url: string, token: string | undefined): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { agent: false, timeout: 5000, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
  });
}

/** Heap used (bytes) from the metrics scrape, or undefined (the reason is logged once). */
async function heapOf(s: Settings, inst: Instance, i: number, warned: Set<string>): Promise<number | undefined> {
  const url = s.metricsUrl.replace('{metrics}', inst.srv.metricsUrl).replace('{url}', inst.srv.url).replace('{i}', String(i));
  try {
    const res = await scrape(url, extraServerEnv().METRICS_TOKEN);
    const v = res.status === 200 ? metric(res.text, 'nodejs_heap_size_used_bytes') : undefined;
    if (v === undefined && !warned.has(url)) {
      warned.add(url);
      log(`${url} answered ${res.status} without nodejs_heap_size_used_bytes: heap not sampled (set --metrics-url)`);
    }
    return v;
  } catch (err) {
    if (!warned.has(url)) {
      warned.add(url);
      log(`${url}: ${err instanceof Error ? err.message : String(err)}: heap not sampled (set --metrics-url)`);
    }
    return undefined;
  }
}

/** A process's start time (clock ticks since boot, /proc/<pid>/stat field 22): the same pid started again would differ. */
function startTimeOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  } catch {
    return undefined;
  }
}

// ---- the run --------------------------------------------------------------------------------

async function run(s: Settings): Promise<{ targets: Target[]; scenario: ScenarioName; part: string }> {
  const snapshotDir = s.heapSnapshots ? mkdtempSync(join(tmpdir(), 'orderline-soak-heap-')) : undefined;
  const engines: PrivateEngines | undefined = s.outage === 'none' ? undefined : await privateEngines();
  if (engines) log(`the soak's own engines: PostgreSQL ${engines.databaseUrl}, Redis ${engines.redisUrl}`);
  const env = {
    ...SERVER_ENV,
    ...(snapshotDir ? { NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapshotDir}` } : {}),
    ...(engines ? { DATABASE_URL: engines.databaseUrl, REDIS_URL: engines.redisUrl } : {}),
    ...extraServerEnv(),
  };
  try {
    return await runOn(s, env, snapshotDir, engines);
  } finally {
    await engines?.close().catch((err: unknown) => log(`closing the soak's engines: ${String(err)}`));
  }
}

async function runOn(s: Settings, env: Record<string, string>, snapshotDir: string | undefined, engines: PrivateEngines | undefined): Promise<{ targets: Target[]; scenario: ScenarioName; part: string }> {
  const d: Deployment = await startDeployment(s.mode === 'embedded' ? 'embedded' : 'postgres-redis', 1, env);
  const sibling = s.mode === 'pg-redis' ? await startSibling(d, env) : undefined;
  const instances: Instance[] = [d.srv, ...(sibling ? [sibling] : [])].map((srv, i) => ({
    name: `instance ${String.fromCharCode(65 + i)}`,
    srv,
    pid: srv.pid,
    alive: true,
    samples: [],
    idleFds: 0,
    idleKinds: new Map<string, number>(),
    lastKinds: new Map<string, number>(),
  }));
  log(`${d.label}${sibling ? ', two instances' : ''}: ${instances.map((x) => `${x.name} ${x.srv.url} pid ${x.pid}`).join(', ')}`);
  const subs = Subscribers.start(s.clientProcs);
  const load = new Load(
    instances.map((x) => x.srv.url),
    d.token,
  );
  try {
    await load.seed(s.orders);
    load.close();
    // Idle: past the keep-alive timeouts (the server's 5 s, fetch's 4 s) of the connections used so far.
    await sleep(6000);
    for (const x of instances) {
      x.idleFds = fdsOf(x.pid);
      x.idleKinds = fdKinds(x.pid);
    }
    log(`${s.orders} orders created; idle fds ${instances.map((x) => x.idleFds).join(', ')}`);

    // Subscribers: order i % orders, instance i % instances, dealt round-robin to the processes.
    const specs: SubSpec[] = [];
    for (let i = 0; i < s.ws + s.sse; i++) specs.push({ kind: i < s.ws ? 'ws' : 'sse', orderId: load.orders[i % s.orders].id, start: 1, home: i % instances.length });
    const t0open = Date.now();
    const opened = await subs.all<number>((p) => ({
      cmd: 'open',
      subs: specs.filter((_, k) => k % s.clientProcs === p),
      urls: instances.map((x) => x.srv.url),
      token: d.token,
      // The soak's backoff: base x 2^attempt + random(0, base), the multiplier capped at 64.
      backoff: { baseMs: s.backoffMs, capMs: s.backoffMs * 64 },
      concurrency: 50,
    }));
    log(`${opened.reduce((a, b) => a + b, 0)} of ${specs.length} subscribers live in ${Date.now() - t0open} ms`);

    // Load, churn, samples.
    const t0 = Date.now();
    const elapsed = () => (Date.now() - t0) / 1000;
    const warned = new Set<string>();
    const sampleAll = async () => {
      const t = elapsed();
      await Promise.all(
        instances.map(async (x, i) => {
          if (!x.alive) return;
          try {
            const rss = rssOf(x.pid);
            const fds = fdsOf(x.pid);
            x.lastKinds = fdKinds(x.pid);
            x.samples.push({ t, rss, fds, heap: await heapOf(s, x, i, warned) });
          } catch {
            // exited meanwhile
          }
        }),
      );
    };
    await sampleAll();
    load.start(s);
    let churnAcc = 0;
    const churnTimer = setInterval(() => {
      churnAcc += ((s.ws + s.sse) * s.churn) / 100;
      const n = Math.floor(churnAcc);
      churnAcc -= n;
      if (n > 0) void subs.all((p) => ({ cmd: 'churn', n: Math.floor(n / s.clientProcs) + (p < n % s.clientProcs ? 1 : 0) }));
    }, 1000);
    const sampler = setInterval(() => void sampleAll(), s.sample * 1000);
    const snapshots: string[] = [];
    const snapshot = (when: string) => {
      const x = instances.filter((i) => i.alive).at(-1);
      if (!snapshotDir || !x) return;
      process.kill(x.pid, 'SIGUSR2');
      snapshots.push(`${when} (${x.name})`);
      log(`heap snapshot ${when} of ${x.name} requested into ${snapshotDir}`);
    };
    let failedOverAt: number | undefined;
    // The outage: every request attempt from the stop is kept, and readiness polled, until both instances are ready again.
    const outage: {
      stoppedAt?: number;
      startedAt?: number;
      readyAt?: number;
      attempts: Attempt[];
      watch?: ReturnType<typeof watchReadiness>;
      /** Subscribers connected when the engine stopped, and when (s) as many were connected again after both were ready. */
      connectedBefore?: number;
      backAt?: number;
      starts: (number | undefined)[];
    } = { attempts: [], starts: instances.map((x) => startTimeOf(x.pid)) };
    if (engines) load.onAttempt = (a) => void (outage.stoppedAt !== undefined && outage.attempts.push(a));
    for (let next = 30; elapsed() < s.duration;) {
      await sleep(Math.min(1000, (s.duration - elapsed()) * 1000));
      if (engines && s.outage !== 'none') {
        if (outage.stoppedAt === undefined && elapsed() >= s.outageAt) {
          outage.watch = watchReadiness(
            instances.map((x) => x.srv.url),
            s.outage,
            elapsed,
          );
          outage.stoppedAt = elapsed();
          outage.connectedBefore = (await subs.stats()).connected;
          await engines.stop(s.outage);
          log(`${s.outage} stopped at ${outage.stoppedAt.toFixed(1)} s`);
        } else if (outage.stoppedAt !== undefined && outage.startedAt === undefined && elapsed() >= outage.stoppedAt + s.outageFor) {
          outage.startedAt = elapsed();
          await engines.start(s.outage);
          log(`${s.outage} started again at ${outage.startedAt.toFixed(1)} s`);
        } else if (outage.readyAt !== undefined && outage.backAt === undefined && outage.readyAt <= (outage.startedAt ?? 0) + READY_AGAIN_S) {
          // Streams back: as many subscribers connected as when the engine stopped (churn keeps a few reconnecting at any time).
          if ((await subs.stats()).connected >= (outage.connectedBefore ?? Infinity)) outage.backAt = elapsed();
        } else if (outage.startedAt !== undefined && outage.readyAt === undefined && outage.watch) {
          const started = outage.startedAt;
          const firstReady = instances.map((_, i) => outage.watch!.answers.find((x) => x.instance === i && x.t >= started && x.status === 200)?.t);
          if (firstReady.every((t) => t !== undefined)) {
            outage.readyAt = Math.max(...firstReady);
            outage.watch.stop();
            log(`both instances ready again at ${outage.readyAt.toFixed(1)} s`);
          } else if (elapsed() > started + READY_AGAIN_S) {
            outage.watch.stop();
            outage.readyAt = elapsed(); // recorded as not ready in time below
            log(`not both ready within ${READY_AGAIN_S} s of the start`);
          }
        }
      }
      if (s.heapSnapshots && snapshots.length === 0 && elapsed() >= s.warmup) snapshot('after warm-up');
      if (s.failover && failedOverAt === undefined && elapsed() >= s.failoverAt) {
        // Killed while a write to it is in flight (waiting up to 2 s for one), so a lost answer is resent.
        for (const until = Date.now() + 2000; !(load.writesInFlight[0] > 0) && Date.now() < until;) await new Promise((r) => setImmediate(r));
        failedOverAt = elapsed();
        instances[0].alive = false;
        process.kill(instances[0].pid, 'SIGKILL');
        log(`kill -9 ${instances[0].name} (pid ${instances[0].pid}) at ${failedOverAt.toFixed(0)} s, ${load.writesInFlight[0] ?? 0} writes to it in flight`);
      }
      if (elapsed() >= next) {
        next += 30;
        const st = await subs.stats();
        const sent = REQ_KINDS.reduce((a, k) => a + load.stats.get(k)!.sent, 0);
        const e5 = count5xx(REQ_KINDS.map((k) => load.stats.get(k)!.statuses));
        const last = instances.map((x) => x.samples.at(-1)).filter((x) => x !== undefined);
        log(
          `${elapsed().toFixed(0)} s: ${st.connected}/${st.subscribers} connected (per instance ${JSON.stringify(st.perInstance)}), ${st.connects} connects, ${st.counts.delivered} events, ` +
            `lost-so-far ${st.counts.lost}, dup ${st.counts.duplicates}, resyncs ${st.counts.resyncs}; ${sent} requests, ${e5} 5xx; RSS ${last.map((x) => (x.rss / 1048576).toFixed(0)).join('/')} MB`,
        );
      }
    }
    clearInterval(churnTimer);
    await load.stop();
    const loadEnd = elapsed();
    if (s.heapSnapshots) snapshot('at the end of the load');
    log(`load stopped at ${loadEnd.toFixed(0)} s; reading every order back`);

    const verified = await load.verify();
    const settled = (await subs.all<boolean>({ cmd: 'settle', heads: verified.heads, ms: s.settle * 1000 })).every(Boolean);
    const reports = await subs.all<SubReport>({ cmd: 'report', heads: verified.heads });
    const st = await subs.stats();
    log(`subscribers ${settled ? 'settled' : `not settled within ${s.settle} s`}; closing them`);
    await subs.all({ cmd: 'close' });
    await subs.stop();
    load.close();
    clearInterval(sampler);
    const afterFrom = elapsed();
    for (let t = 0; t < s.cooldown; t += s.sample) {
      await sleep(Math.min(s.sample, s.cooldown - t) * 1000);
      await sampleAll();
    }
    if (s.cooldown === 0) await sampleAll();
    const afterTo = elapsed();
    const fdFindings: string[] = [];
    for (const x of instances.filter((i) => i.alive)) {
      const diff = fdDiff(x.idleKinds, x.lastKinds);
      if (diff && (x.samples.at(-1)?.fds ?? 0) > x.idleFds) fdFindings.push(`${x.name}: open fds, idle -> after the load: ${diff}`);
    }
    fdFindings.forEach(log);

    // ---- verdict ----
    const kinds = { ws: { ...zeroCounts(), subscribers: 0 }, sse: { ...zeroCounts(), subscribers: 0 } };
    for (const r of reports) for (const k of ['ws', 'sse'] as const) kinds[k] = { ...addCounts(kinds[k], r.byKind[k]), subscribers: kinds[k].subscribers + r.byKind[k].subscribers };
    const total = { ...addCounts(kinds.ws, kinds.sse), subscribers: kinds.ws.subscribers + kinds.sse.subscribers };
    const behind = reports.reduce((a, r) => a + r.behind, 0);
    const notes = reports.flatMap((r) => r.notes).slice(0, 10);
    const statuses = REQ_KINDS.map((k) => load.stats.get(k)!.statuses);
    // The outage's well-formed 503s are what the outage targets ask for: not counted here.
    // Sent from the stop until both were ready again (or the run's end).
    // Requests that were out while the engine was away: done after the stop (those in flight at the stop included), sent before both were ready again.
    const outageAttempts = outage.attempts.filter((a) => a.doneAt >= t0 + (outage.stoppedAt ?? Infinity) * 1000 && a.sentAt <= t0 + (outage.readyAt ?? Infinity) * 1000);
    const outage503 = outageAttempts.filter((a) => a.status === 503 && a.explained && a.retryAfter).length;
    const e5 = count5xx(statuses) - outage503;
    const b = load.book;
    const targets: Target[] = [
      ...streamTargets({ counts: total, behind, unknown: st.unknown }),
      {
        name: engines ? '5xx answers, beside the outage 503s' : '5xx answers',
        value: `${e5} of ${REQ_KINDS.reduce((a, k) => a + load.stats.get(k)!.sent, 0)} requests${engines ? ` (${outage503} 503s with Retry-After, explained, while ${s.outage} was away)` : ''}`,
        goal: '0',
        met: e5 === 0,
      },
      {
        name: 'writes durable, each applied once',
        value:
          `${b.acked} acknowledged, ${b.unackedAppliedBefore + b.unackedAppliedOnRetry} unacknowledged (${b.unackedAppliedBefore} had been applied, ${b.unackedAppliedOnRetry} applied by the retry); ` +
          `${verified.orders} orders read back: ${verified.wrongState.length} not as acknowledged, ${verified.createsNotOnce.length} creates not exactly once, ${b.conflicts} unexplained 412, ${b.anomalies.length} anomalies`,
        goal: 'every write found once',
        met: verified.wrongState.length === 0 && verified.createsNotOnce.length === 0 && b.conflicts === 0 && b.anomalies.length === 0,
      },
    ];
    if (engines && s.outage !== 'none') {
      outage.watch?.stop();
      const stoppedAt = outage.stoppedAt ?? NaN;
      const startedAt = outage.startedAt ?? NaN;
      const readyAt = outage.readyAt !== undefined && outage.readyAt <= startedAt + READY_AGAIN_S ? outage.readyAt : undefined;
      const record: OutageRecord = {
        engine: s.outage,
        stoppedAt,
        startedAt,
        readyAt,
        attempts: outageAttempts,
        readiness: outage.watch?.answers ?? [],
        instances: instances.length,
        samePids: instances.map((x, i) => alive(x.pid) && outage.starts[i] !== undefined && startTimeOf(x.pid) === outage.starts[i]),
        connectedBefore: outage.connectedBefore ?? NaN,
        backAt: outage.backAt,
      };
      targets.push(...outageTargets(record));
    }
    // After a failover the survivor carries everything: its trend starts a minute later.
    const from = failedOverAt === undefined ? s.warmup : Math.max(s.warmup, failedOverAt + 60);
    // An outage run judges the outage; memory over time is the soak scenarios' (its samples are still in the part).
    for (const x of instances.filter((i) => i.alive && !engines)) {
      if (from >= loadEnd) log(`${x.name}: no samples after warm-up${failedOverAt ? ' and the failover' : ''} while the load ran: trend not judged`);
      targets.push(...memoryTargets(x.name, x.samples, { from, to: loadEnd, afterFrom, afterTo, idleFds: x.idleFds, slopeLimitMb: s.slopeLimitMb, returnPct: s.returnPct }));
    }

    const lat = REQ_KINDS.map((k) => {
      const l = load.latency(k);
      const ks = load.stats.get(k)!;
      return { kind: k, sent: ks.sent, statuses: ks.statuses, noAnswer: ks.noAnswer, skipped: ks.skipped, ...l };
    });
    const scenario = scenarioOf(s);
    const part = reliabilityPart({
      scenario,
      settings: s,
      env: environment(),
      label: `${d.label}${sibling ? ', two instances' : ''}`,
      seconds: loadEnd,
      targets,
      kinds,
      stats: st,
      settled,
      notes,
      anomalies: [...fdFindings, ...b.anomalies, ...verified.wrongState, ...verified.createsNotOnce].slice(0, 12),
      latency: lat,
      failedOverAt,
      trendFrom: from,
      snapshots: snapshotDir ? `${snapshots.join(', ')} in ${snapshotDir}` : undefined,
      memory: instances.map((x) => ({ name: x.name, samples: x.samples, idleFds: x.idleFds, alive: x.alive })),
    });
    console.log(part);
    return { targets, scenario, part };
  } finally {
    await subs.stop().catch(() => undefined);
    load.close();
    if (sibling) await sibling.stop();
    await stopAll();
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help')) {
    console.log(`usage: npm run soak -- [settings]\n${usage()}\nSOAK_SERVER_ENV="K=V ..." adds server environment.`);
    return;
  }
  const s = settingsOf(args, process.env);
  if (targetOverride) throw new Error("bench/soak.ts runs the service's own deployments: unset BENCH_TARGET_CMD");
  if (!existsSync(serviceEntry)) throw new Error('dist/src/main.js is missing: run npm run build first');
  const fill = ringFillSeconds(s, extraServerEnv());
  if (fill > s.warmup) log(`the replay rings fill in about ${Math.round(fill)} s, after the ${s.warmup} s warm-up: expect their growth in the trend`);
  const onSignal = () => void stopAll().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const { targets, scenario, part } = await run(s);
  console.log(`\nsoak verdict (${scenario}):\n${renderTargets(targets).join('\n')}`);
  if (s.write) {
    editBenchmarks((text) => writeReliability(text, scenario, part));
    console.log(`soak: wrote the ${scenario} part of the Reliability section of BENCHMARKS.md`);
  }
  if (!passed(targets)) process.exitCode = 1;
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`soak: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  });
}
