/** Fan-out: delivered messages/s, publish-to-delivery latency and server CPU per delivered message. */
import { type CpuShares, cpuWindow, meanShares, pidsNamed } from '../lib/cpu';
import { metric } from '../lib/prometheus';
import { noteOf, nowUs, quantileMs } from '../lib/realtime-hist';
import { pidOfPort } from '../lib/realtime-proc';
import { type Running, startService } from '../lib/server';
import { Clients } from './clients';
import { type Row } from './rows';
import { type Publish, patchOrder1, portOf, publishRaw, scrape, startRaw, tokenOf, withServer } from './servers';
import { FANOUT_CONNECTIONS, RATE, ROUNDS, SECONDS, SERVICE_ENV, STREAM_CLIENT, WINDOW, log, sleep } from './settings';
// ---- fan-out ----------------------------------------------------------------------------------

export interface RunResult {
  sent: number;
  errors: number;
  subscribers: number;
  delivered: number;
  expected: number;
  incomplete: number;
  elapsedS: number;
  perS: number;
  writesPerS: number;
  p50: number;
  p99: number;
  max: number;
  serverCpu: number;
  clientCpu: number;
  serverUsPerMsg: number;
  closed: number;
  /** Where the machine's CPU went over the run (server = the server's processes). */
  cpu: CpuShares;
}

let runCounter = 0;

export type Mode = { kind: 'steady'; rate: number } | { kind: 'max'; window: number };

/**
 * One measured run of `seconds` against `group`'s subscribers; waits for delivery to drain.
 * `pids` are the server's processes (a cluster primary and its workers).
 */
export async function measureRun(clients: Clients, group: string, publish: Publish, pids: number[], mode: Mode, seconds: number): Promise<RunResult> {
  const run = ++runCounter;
  await clients.all({ cmd: 'run', group, run, track: mode.kind === 'max' });
  const perProc = (await clients.stats()).perProc.map((s) => s.live[group] ?? 0);
  const subscribers = perProc.reduce((a, b) => a + b, 0);
  const cpuEnd = cpuWindow({
    server: () => pids,
    clients: () => clients.pids,
    bench: () => [process.pid],
    postgres: () => pidsNamed(/^postgres$/),
    redis: () => pidsNamed(/^redis-server$/),
  });
  const start = nowUs();
  const end = start + seconds * 1e6;
  let sent = 0;
  let errors = 0;
  let incomplete = 0;
  const count = (p: Promise<number>) =>
    p.then(
      (s) => void (s >= 300 && errors++),
      () => void errors++,
    );

  if (mode.kind === 'steady') {
    const inflight: Promise<void>[] = [];
    const interval = 1e6 / mode.rate;
    for (let i = 0; ; i++) {
      const at = start + i * interval;
      if (at >= end) break;
      const wait = (at - nowUs()) / 1000;
      if (wait >= 1) await sleep(wait);
      sent++;
      inflight.push(count(publish(noteOf(run, nowUs()))));
    }
    await Promise.all(inflight);
  } else {
    const waiters = new Map<number, { left: number; resolve: () => void }>();
    clients.onDone = (t) => {
      const w = waiters.get(t);
      if (w && --w.left === 0) {
        waiters.delete(t);
        w.resolve();
      }
    };
    const reporting = perProc.filter((n) => n > 0).length;
    let lastT = 0;
    const one = async () => {
      let t = nowUs();
      if (t <= lastT) t = lastT + 1;
      lastT = t;
      let timer: NodeJS.Timeout | undefined;
      const done = new Promise<boolean>((resolve) => {
        waiters.set(t, { left: reporting, resolve: () => resolve(true) });
        timer = setTimeout(() => resolve(false), 10_000);
      });
      sent++;
      const status = count(publish(noteOf(run, t)));
      if (!(await done)) {
        incomplete++;
        waiters.delete(t);
      }
      clearTimeout(timer);
      await status;
    };
    await Promise.all(
      Array.from({ length: mode.window }, async () => {
        while (nowUs() < end) await one();
      }),
    );
    clients.onDone = () => undefined;
  }

  // Drain: until every subscriber has every write, or nothing arrives for 2 s.
  const expected = sent * subscribers;
  let s = await clients.stats();
  for (let last = s.received, quietSince = Date.now(); s.received < expected && Date.now() - quietSince < 2000;) {
    await sleep(200);
    s = await clients.stats();
    if (s.received !== last) [last, quietSince] = [s.received, Date.now()];
  }
  const shares = cpuEnd();
  const wall = nowUs() - start;
  const cpu = shares.groups.server * wall;
  const elapsedS = ((s.lastAt || nowUs()) - start) / 1e6;
  return {
    sent,
    errors,
    subscribers,
    delivered: s.received,
    expected,
    incomplete,
    elapsedS,
    perS: s.received / elapsedS,
    writesPerS: sent / elapsedS,
    p50: quantileMs(s.hist, 0.5),
    p99: quantileMs(s.hist, 0.99),
    max: quantileMs(s.hist, 1),
    serverCpu: cpu / wall,
    clientCpu: s.cpuUs / wall,
    serverUsPerMsg: cpu / Math.max(1, s.received),
    closed: s.closedInRun,
    cpu: shares,
  };
}

export const fmtRun = (r: RunResult) =>
  `${Math.round(r.perS)} msg/s (${r.delivered}/${r.expected}, ${r.sent} writes, ${r.writesPerS.toFixed(1)}/s${r.errors ? `, ${r.errors} failed` : ''}` +
  `${r.incomplete ? `, ${r.incomplete} incomplete` : ''}${r.closed ? `, ${r.closed} closed` : ''}), p50 ${r.p50.toFixed(1)} ms p99 ${r.p99.toFixed(1)} ms max ${r.max.toFixed(0)} ms, ` +
  `server CPU ${(r.serverCpu * 100).toFixed(0)}% (${r.serverUsPerMsg.toFixed(2)} µs/msg), clients CPU ${(r.clientCpu * 100).toFixed(0)}%`;

export function combineRuns(rs: RunResult[]): RunResult {
  const sum = (f: (r: RunResult) => number) => rs.reduce((s, r) => s + f(r), 0);
  const mean = (f: (r: RunResult) => number) => sum(f) / rs.length;
  return {
    sent: sum((r) => r.sent),
    errors: sum((r) => r.errors),
    subscribers: Math.min(...rs.map((r) => r.subscribers)),
    delivered: sum((r) => r.delivered),
    expected: sum((r) => r.expected),
    incomplete: sum((r) => r.incomplete),
    elapsedS: sum((r) => r.elapsedS),
    perS: mean((r) => r.perS),
    writesPerS: mean((r) => r.writesPerS),
    p50: mean((r) => r.p50),
    p99: Math.max(...rs.map((r) => r.p99)),
    max: Math.max(...rs.map((r) => r.max)),
    serverCpu: mean((r) => r.serverCpu),
    clientCpu: mean((r) => r.clientCpu),
    serverUsPerMsg: mean((r) => r.serverUsPerMsg),
    closed: sum((r) => r.closed),
    cpu: meanShares(rs.map((r) => r.cpu)),
  };
}

/** One side of a fan-out comparison: a server with its subscribers in the client group `name`. */
export interface FanoutSide {
  /** The client group and the name in the log. */
  name: string;
  srv: Running;
  /** Bearer token for the subscribers (any string for the bare server). */
  token: string;
  /** The server's processes (CPU figures): one pid, or a cluster primary and its workers. */
  pids: number[];
  /** Called once every side's subscribers are open: how one write is published. */
  publisher: () => Promise<Publish>;
}

export interface FanoutResult {
  /** Closed loop, the rounds combined (mean msgs/s, worst p99). */
  max: RunResult;
  /** One open-loop run at BENCH_RT_RATE writes/s. */
  steady: RunResult;
}

/**
 * Fan-out side by side: BENCH_RT_FANOUT_CONNECTIONS WebSocket subscribers of order:1 on every
 * side at once (opened in the order given), a 1 s closed-loop warm-up of each, BENCH_RT_ROUNDS
 * closed-loop rounds of BENCH_RT_SECONDS alternating between the sides in that order, then one
 * steady run each; the subscribers are closed before it returns.
 */
export async function fanoutCompare(clients: Clients, sides: FanoutSide[]): Promise<Map<string, FanoutResult>> {
  const channels = Array.from({ length: FANOUT_CONNECTIONS }, () => 'order:1');
  for (const side of sides) {
    const o = await clients.openWs(side.name, side.srv, side.token, channels, STREAM_CLIENT);
    log(`fan-out ${side.name}: opened ${o.opened}/${FANOUT_CONNECTIONS} in ${o.ms} ms${o.failed ? `, ${o.failed} failed (${o.firstError})` : ''}`);
    if (!o.opened) throw new Error(`fan-out: no ${side.name} connection could be opened: ${o.firstError}`);
  }
  const publish = new Map<string, Publish>();
  for (const side of sides) publish.set(side.name, await side.publisher());
  const go = async (side: FanoutSide, mode: Mode, seconds: number, label: string) => {
    const r = await measureRun(clients, side.name, publish.get(side.name)!, side.pids, mode, seconds);
    log(`${label} ${side.name}: ${fmtRun(r)}`);
    return r;
  };
  const closedLoop: Mode = { kind: 'max', window: WINDOW };
  for (const side of sides) await go(side, closedLoop, 1, 'warm-up');
  const rounds = new Map<string, RunResult[]>(sides.map((s) => [s.name, []]));
  for (let i = 0; i < ROUNDS; i++) for (const side of sides) rounds.get(side.name)!.push(await go(side, closedLoop, SECONDS, `max round ${i + 1}/${ROUNDS}`));
  const out = new Map<string, FanoutResult>();
  for (const side of sides) out.set(side.name, { max: combineRuns(rounds.get(side.name)!), steady: await go(side, { kind: 'steady', rate: RATE }, SECONDS, `steady ${RATE}/s`) });
  for (const side of sides) await clients.all({ cmd: 'close', group: side.name });
  return out;
}

/** "61413 msg/s; p50 230.4 ms, p99 554.0 ms" */
export const fanoutFig = (r: RunResult) => `${Math.round(r.perS)} msg/s; p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms`;
export const fanoutCpuNote = (r: RunResult) => `server CPU ${(r.serverCpu * 100).toFixed(0)}% (${r.serverUsPerMsg.toFixed(2)} µs per delivered msg), clients ${(r.clientCpu * 100).toFixed(0)}%`;
export const fanoutLost = (r: RunResult) => (r.delivered < r.expected ? `, ${r.expected - r.delivered} of ${r.expected} not delivered` : '');

export async function fanoutPhase(clients: Clients): Promise<Row[]> {
  return withServer(
    () => startService(SERVICE_ENV),
    (svc) =>
      withServer(startRaw('ws'), async (base) => {
        const token = await tokenOf(svc);
        let sample = '';
        const [s, b] = await fanoutCompare(clients, [
          {
            name: 'baseline',
            srv: base,
            token,
            pids: [pidOfPort(portOf(base))],
            // One real message from the service is the bare server's payload.
            publisher: async () => {
              await clients.all({ cmd: 'run', group: 'service', run: 0, track: false });
              if ((await patchOrder1(svc, token)(noteOf(0, nowUs()))) !== 200) throw new Error('PATCH /orders/1 failed');
              for (let i = 0; i < 50 && !sample; i++) {
                await sleep(100);
                sample = (await clients.call<string | null>(0, { cmd: 'sample', group: 'service' })) ?? '';
              }
              if (!sample) throw new Error('no order.updated message reached the subscribers');
              log(`fan-out payload: ${Buffer.byteLength(sample)} bytes, e.g. ${sample.slice(0, 100)}...`);
              return publishRaw(base, sample);
            },
          },
          { name: 'service', srv: svc, token, pids: [pidOfPort(portOf(svc))], publisher: async () => patchOrder1(svc, token) },
        ]).then((m) => [m.get('service')!, m.get('baseline')!]);
        const backpressure = metric(await scrape(svc), 'orderline_stream_backpressure_closes_total') ?? 0;
        const bytes = Buffer.byteLength(sample);
        const n = s.max.subscribers;
        return [
          {
            scenario: 'ws-fanout-max',
            service: `${n} WebSocket subscribers of order:1; PATCH /orders/1 closed loop (${WINDOW} writes in flight, the next when one reached all subscribers); delivered msgs/s`,
            baseline: `bare \`ws\` server (bench/baseline/ws-raw.ts): POST /publish of the same ${bytes}-byte message, client.send() per client, same loop`,
            serviceFig: fanoutFig(s.max),
            baselineFig: fanoutFig(b.max),
            ratio: s.max.perS / b.max.perS,
            goal: `>= 0.60 (${s.max.perS / b.max.perS >= 0.6 ? 'met' : 'missed'})`,
            notes:
              `${ROUNDS} x ${SECONDS} s alternating; service ${s.max.writesPerS.toFixed(1)} writes/s, ${fanoutCpuNote(s.max)}${fanoutLost(s.max)}; ` +
              `baseline ${b.max.writesPerS.toFixed(1)} writes/s, ${fanoutCpuNote(b.max)}${fanoutLost(b.max)}; backpressure closes ${backpressure}`,
          },
          {
            scenario: 'ws-fanout-steady',
            service: `as ws-fanout-max, writes at a steady ${RATE}/s (${RATE * n} msgs/s offered) for ${SECONDS} s; publish-to-delivery latency`,
            baseline: 'bare `ws` server as in ws-fanout-max, same rate',
            serviceFig: fanoutFig(s.steady),
            baselineFig: fanoutFig(b.steady),
            ratio: s.steady.p99 / b.steady.p99,
            goal: 'reference (latency below saturation); ratio = p99 service / baseline',
            notes:
              `msgs/s service/baseline ${(s.steady.perS / b.steady.perS).toFixed(2)}; service max ${s.steady.max.toFixed(0)} ms, ${fanoutCpuNote(s.steady)}${fanoutLost(s.steady)}; ` +
              `baseline max ${b.steady.max.toFixed(0)} ms, ${fanoutCpuNote(b.steady)}${fanoutLost(b.steady)}`,
          },
        ];
      }),
  );
}
