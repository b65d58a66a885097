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
import { KINDS, PEER_CONNECTIONS, PEER_RATE, ROUNDS, SECONDS, SERVICE_ENV, log, sleep } from './settings';

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

async function compare(clients: Clients, svc: Running, peer: Running, token: string, kind: Kind, sample: string): Promise<{ s: RunResult; p: RunResult; sr: RunResult[]; pr: RunResult[]; sSys: number; pSys: number }> {
  const sides: { name: string; pids: number[]; publish: Publish }[] = [
    { name: `service-${kind}`, pids: [pidOfPort(portOf(svc))], publish: patchOrder1(svc, token) },
    { name: `peer-${kind}`, pids: [pidOfPort(portOf(peer))], publish: publishRaw(peer, sample) },
  ];
  await open(clients, sides[0].name, svc, token, kind, 'lean');
  await open(clients, sides[1].name, peer, token, kind, 'sio');
  const runs = new Map<string, RunResult[]>(sides.map((s) => [s.name, []]));
  const sys = new Map<string, { user: number; system: number }>(sides.map((s) => [s.name, { user: 0, system: 0 }]));
  const mode = { kind: 'steady', rate: PEER_RATE } as const;
  for (const side of sides) await measureRun(clients, side.name, side.publish, side.pids, mode, 1); // warm-up
  for (let i = 0; i < ROUNDS; i++) {
    for (const side of sides) {
      const c0 = cpuSplitOf(side.pids[0]);
      const r = await measureRun(clients, side.name, side.publish, side.pids, mode, SECONDS);
      const c1 = cpuSplitOf(side.pids[0]);
      const acc = sys.get(side.name)!;
      acc.user += c1.user - c0.user;
      acc.system += c1.system - c0.system;
      log(`peers ${kind} round ${i + 1}/${ROUNDS} ${side.name}: ${r.serverUsPerMsg.toFixed(2)} µs/msg, ${r.delivered}/${r.expected} delivered, server CPU ${(r.serverCpu * 100).toFixed(0)}%, p99 ${r.p99.toFixed(1)} ms`);
      runs.get(side.name)!.push(r);
    }
  }
  for (const side of sides) await clients.all({ cmd: 'close', group: side.name });
  const [sr, pr] = [runs.get(sides[0].name)!, runs.get(sides[1].name)!];
  const sysShare = (name: string) => {
    const c = sys.get(name)!;
    return c.system / Math.max(1, c.user + c.system);
  };
  return { s: combineRuns(sr), p: combineRuns(pr), sr, pr, sSys: sysShare(sides[0].name), pSys: sysShare(sides[1].name) };
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
      for (const kind of KINDS) {
        const { s, p, sr, pr, sSys, pSys } = await withServer(startPeer(kind), (peer) => compare(clients, svc, peer, token, kind, sample));
        const ratio = s.serverUsPerMsg / p.serverUsPerMsg;
        const peerName = kind === 'ws' ? 'Socket.IO 4' : 'better-sse';
        rows.push({
          scenario: `${kind}-fanout-cpu-peer`,
          service:
            kind === 'ws'
              ? `${s.subscribers} WebSocket subscribers of order:1 (lean client), PATCH /orders/1 at ${PEER_RATE}/s; server CPU per delivered message`
              : `${s.subscribers} SSE streams of order 1, PATCH /orders/1 at ${PEER_RATE}/s; server CPU per delivered message`,
          baseline:
            kind === 'ws'
              ? `Socket.IO 4 (bench/baseline/socketio.ts, connectionStateRecovery on, websocket transport; socket.io-client): io.to(room).emit of the same ${Buffer.byteLength(sample)}-byte message, same rate`
              : `better-sse (bench/baseline/better-sse.ts): channel.broadcast of the same ${Buffer.byteLength(sample)}-byte message, same rate`,
          serviceFig: `${s.serverUsPerMsg.toFixed(2)} µs per delivered msg`,
          baselineFig: `${p.serverUsPerMsg.toFixed(2)} µs per delivered msg`,
          ratio,
          goal: kind === 'ws' ? `<= 0.50x Socket.IO (${ratio <= 0.5 ? 'met' : 'missed'})` : `below ${peerName} (${ratio < 1 ? 'met' : 'missed'})`,
          notes:
            `${ROUNDS} x ${SECONDS} s alternating; µs/msg by round: service ${perRound(sr)}, peer ${perRound(pr)} (ratio ${sr.map((r, i) => (r.serverUsPerMsg / pr[i].serverUsPerMsg).toFixed(2)).join(', ')}); ` +
            `system (kernel) share of the server's CPU: service ${(sSys * 100).toFixed(0)}%, peer ${(pSys * 100).toFixed(0)}%; ` +
            `service p99 ${s.p99.toFixed(1)} ms, ${fanoutCpuNote(s)}${fanoutLost(s)}; peer p99 ${p.p99.toFixed(1)} ms, ${fanoutCpuNote(p)}${fanoutLost(p)}`,
        });
      }
      return rows;
    },
  );
}
