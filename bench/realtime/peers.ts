/**
 * Fan-out against the libraries users would pick instead (issue 13): server CPU per
 * delivered message, the service's WebSocket vs Socket.IO 4 and its SSE vs better-sse, at
 * the same load in the same run: BENCH_RT_PEER_CONNECTIONS subscribers of order:1 on each
 * server, writes at a steady BENCH_RT_PEER_RATE/s for BENCH_RT_SECONDS, BENCH_RT_ROUNDS
 * rounds alternating service and peer. The peers publish one real `order.updated` message
 * taken from the service (note replaced, same size).
 */
import { noteOf, nowUs } from '../lib/realtime-hist';
import { cpuSplitOf, pidOfPort } from '../lib/realtime-proc';
import { type Running, startService } from '../lib/server';
import { Clients } from './clients';
import { combineRuns, fanoutCpuNote, fanoutLost, measureRun, type RunResult } from './fanout';
import { type Row } from './rows';
import { type Publish, patchOrder1, portOf, publishRaw, startPeer, tokenOf, withServer } from './servers';
import { KINDS, PEER_CONNECTIONS, PEER_RATE, PEER_WRITE_DELAY_MS, ROUNDS, SECONDS, SERVICE_ENV, log, sleep } from './settings';

type Kind = 'ws' | 'sse';

async function open(clients: Clients, group: string, srv: Running, token: string, kind: Kind, client: 'lean' | 'sio'): Promise<void> {
  const o =
    kind === 'ws'
      ? await clients.openWs(group, srv, token, Array.from({ length: PEER_CONNECTIONS }, () => 'order:1'), client)
      : await clients.openSse(group, srv, token, Array.from({ length: PEER_CONNECTIONS }, () => '/api/orders/1/stream'));
  log(`peers ${group}: opened ${o.opened}/${PEER_CONNECTIONS} in ${o.ms} ms${o.failed ? `, ${o.failed} failed (${o.firstError})` : ''}`);
  if (!o.opened) throw new Error(`peers: no ${group} connection could be opened: ${o.firstError}`);
}

/** One real order.updated message from the service, as its WebSocket subscribers get it. */
async function sampleOf(clients: Clients, svc: Running, token: string): Promise<string> {
  await clients.openWs('sample', svc, token, ['order:1'], 'lean');
  await clients.all({ cmd: 'run', group: 'sample', run: 0, track: false });
  if ((await patchOrder1(svc, token)(noteOf(0, nowUs()))) !== 200) throw new Error('PATCH /orders/1 failed');
  let sample = '';
  for (let i = 0; i < 50 && !sample; i++) {
    await sleep(100);
    for (let p = 0; p < clients.procs.length && !sample; p++) sample = (await clients.call<string | null>(p, { cmd: 'sample', group: 'sample' })) ?? '';
  }
  await clients.all({ cmd: 'close', group: 'sample' });
  if (!sample) throw new Error('no order.updated message reached the sample subscriber');
  return sample;
}

interface SideResult {
  all: RunResult;
  rounds: RunResult[];
  /** The kernel's (system) share of the server process's CPU over the rounds. */
  sys: number;
}

/** The sides' subscribers are opened, then warm-up, then ROUNDS rounds alternating between the sides in the order given. */
async function compare(clients: Clients, sides: { name: string; srv: Running; token: string; client: 'lean' | 'sio'; publish: Publish }[], kind: Kind): Promise<SideResult[]> {
  for (const side of sides) await open(clients, side.name, side.srv, side.token, kind, side.client);
  const pids = sides.map((side) => [pidOfPort(portOf(side.srv))]);
  const runs = sides.map(() => [] as RunResult[]);
  const cpu = sides.map(() => ({ user: 0, system: 0 }));
  const mode = { kind: 'steady', rate: PEER_RATE } as const;
  for (const [i, side] of sides.entries()) await measureRun(clients, side.name, side.publish, pids[i], mode, 1); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, side] of sides.entries()) {
      const c0 = cpuSplitOf(pids[i][0]);
      const r = await measureRun(clients, side.name, side.publish, pids[i], mode, SECONDS);
      const c1 = cpuSplitOf(pids[i][0]);
      cpu[i].user += c1.user - c0.user;
      cpu[i].system += c1.system - c0.system;
      log(`peers ${kind} round ${round + 1}/${ROUNDS} ${side.name}: ${r.serverUsPerMsg.toFixed(2)} µs/msg, ${r.delivered}/${r.expected} delivered, server CPU ${(r.serverCpu * 100).toFixed(0)}%, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms`);
      runs[i].push(r);
    }
  }
  for (const side of sides) await clients.all({ cmd: 'close', group: side.name });
  return sides.map((_, i) => ({ all: combineRuns(runs[i]), rounds: runs[i], sys: cpu[i].system / Math.max(1, cpu[i].user + cpu[i].system) }));
}

const perRound = (rs: RunResult[]) => rs.map((r) => r.serverUsPerMsg.toFixed(1)).join(', ');

export async function peersPhase(clients: Clients): Promise<Row[]> {
  return withServer(
    () => startService(SERVICE_ENV),
    async (svc) => {
      const token = await tokenOf(svc);
      const sample = await sampleOf(clients, svc, token);
      log(`peers payload: ${Buffer.byteLength(sample)} bytes`);
      const rows: Row[] = [];
      const bytes = Buffer.byteLength(sample);
      for (const kind of KINDS) {
        const peerName = kind === 'ws' ? 'Socket.IO 4' : 'better-sse';
        const peerClient = kind === 'ws' ? 'sio' : 'lean';
        const results = await withServer(startPeer(kind), (peer) =>
          withServer(
            () => startService({ ...SERVICE_ENV, WRITE_DELAY_MS: String(PEER_WRITE_DELAY_MS) }),
            async (batched) => {
              const batchedToken = await tokenOf(batched);
              return compare(
                clients,
                [
                  { name: `service-${kind}`, srv: svc, token, client: 'lean', publish: patchOrder1(svc, token) },
                  { name: `service-batched-${kind}`, srv: batched, token: batchedToken, client: 'lean', publish: patchOrder1(batched, batchedToken) },
                  { name: `peer-${kind}`, srv: peer, token, client: peerClient, publish: publishRaw(peer, sample) },
                ],
                kind,
              );
            },
          ),
        );
        const [s, b, p] = results;
        const what =
          kind === 'ws'
            ? `${s.all.subscribers} WebSocket subscribers of order:1 (lean client), PATCH /orders/1 at ${PEER_RATE}/s; server CPU per delivered message`
            : `${s.all.subscribers} SSE streams of order 1, PATCH /orders/1 at ${PEER_RATE}/s; server CPU per delivered message`;
        const peerText =
          kind === 'ws'
            ? `Socket.IO 4 (bench/baseline/socketio.ts, connectionStateRecovery on, websocket transport; socket.io-client): io.to(room).emit of the same ${bytes}-byte message, same rate`
            : `better-sse (bench/baseline/better-sse.ts): channel.broadcast of the same ${bytes}-byte message, same rate`;
        const goalOf = (ratio: number) => (kind === 'ws' ? `<= 0.50x Socket.IO (${ratio <= 0.5 ? 'met' : 'missed'})` : `below ${peerName} (${ratio < 1 ? 'met' : 'missed'})`);
        const notesOf = (x: SideResult) =>
          `${ROUNDS} x ${SECONDS} s alternating (service, service with WRITE_DELAY_MS=${PEER_WRITE_DELAY_MS}, peer); µs/msg by round: service ${perRound(x.rounds)}, peer ${perRound(p.rounds)}; ` +
          `system (kernel) share of the server's CPU: service ${(x.sys * 100).toFixed(0)}%, peer ${(p.sys * 100).toFixed(0)}%; ` +
          `service p50 ${x.all.p50.toFixed(1)} ms, p99 ${x.all.p99.toFixed(1)} ms, ${fanoutCpuNote(x.all)}${fanoutLost(x.all)}; peer p50 ${p.all.p50.toFixed(1)} ms, p99 ${p.all.p99.toFixed(1)} ms, ${fanoutCpuNote(p.all)}${fanoutLost(p.all)}`;
        for (const [x, scenario, label] of [
          [s, `${kind}-fanout-cpu-peer`, what],
          [b, `${kind}-fanout-cpu-peer-batched`, `as ${kind}-fanout-cpu-peer, service with WRITE_DELAY_MS=${PEER_WRITE_DELAY_MS} (writes to a connection batched for up to ${PEER_WRITE_DELAY_MS} ms)`],
        ] as const) {
          const ratio = x.all.serverUsPerMsg / p.all.serverUsPerMsg;
          rows.push({
            scenario,
            service: label,
            baseline: peerText,
            serviceFig: `${x.all.serverUsPerMsg.toFixed(2)} µs per delivered msg (p99 ${x.all.p99.toFixed(0)} ms)`,
            baselineFig: `${p.all.serverUsPerMsg.toFixed(2)} µs per delivered msg (p99 ${p.all.p99.toFixed(0)} ms)`,
            ratio,
            goal: goalOf(ratio),
            notes: notesOf(x),
          });
        }
      }
      return rows;
    },
  );
}
