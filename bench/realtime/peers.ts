/**
 * Fan-out against the libraries users would pick instead: server CPU per
 * delivered message, the service's WebSocket vs Socket.IO 4 and its SSE vs better-sse, at
 * the same load in the same run: BENCH_RT_PEER_CONNECTIONS subscribers of order:1 on each
 * server, writes at a steady BENCH_RT_PEER_RATE/s for BENCH_RT_SECONDS, BENCH_RT_ROUNDS
 * rounds alternating the sides. The peers publish one real `order.updated` message taken
 * from the service (note replaced, same size).
 *
 * Every side is read by the same lean reader (Socket.IO's packets for Socket.IO), so the
 * clients cost the same whichever server they read. Each transport has a floor
 * (bench/baseline/ws-floor.ts, bench/baseline/sse-floor.ts: one socket.write per delivered
 * message of bytes built once per publish, and nothing else), which says what the write
 * system call alone costs on the machine at hand (rows `ws-fanout-cpu-floor`,
 * `sse-fanout-cpu-floor`). WebSocket adds two sides: Socket.IO read by socket.io-client (as
 * earlier runs measured it), and a service with one subscriber PATCHed at the same rate,
 * whose CPU per PATCH says what the service's publish path (a real write: HTTP, auth,
 * transaction, event row) adds per delivered message, which a peer's POST /publish of a
 * ready message does not do.
 *
 * Scale: every side's subscribers stay open through the rounds, so the client processes hold
 * sides x BENCH_RT_PEER_CONNECTIONS connections (WebSocket 5 sides, SSE 4), dealt over
 * BENCH_RT_CLIENT_PROCS; each server holds BENCH_RT_PEER_CONNECTIONS. Both must fit under
 * `ulimit -n` (checked before opening: at 10000, 3 client processes under a limit of 20000).
 * At another count than the default (2000) the rows' scenario keys end in `-<count>`
 * (`ws-fanout-cpu-peer-10000`), so runs at both counts keep their rows.
 */
import { noteOf, nowUs } from '../lib/realtime-hist';
import { cpuSplitOf, pidOfPort } from '../lib/realtime-proc';
import { type Running, startService } from '../lib/server';
import { Clients } from './clients';
import { combineRuns, fanoutCpuNote, fanoutLost, measureRun, type RunResult } from './fanout';
import { type Row, scaledScenario } from './rows';
import { type Publish, patchOrder1, portOf, publishRaw, startFloor, startPeer, tokenOf, withServer } from './servers';
import { type WsClient } from '../lib/realtime-client';
import { clientFds, DEFAULT_PEER_CONNECTIONS, FD_SPARE, KINDS, openFilesLimit, PEER_CONNECTIONS, PEER_RATE, PEER_WRITE_DELAY_MS, ROUNDS, SECONDS, SERVICE_ENV, log, sleep } from './settings';

type Kind = 'ws' | 'sse';

async function open(clients: Clients, group: string, srv: Running, token: string, kind: Kind, client: WsClient, n: number): Promise<void> {
  const o =
    kind === 'ws'
      ? await clients.openWs(
          group,
          srv,
          token,
          Array.from({ length: n }, () => 'order:1'),
          client,
        )
      : await clients.openSse(
          group,
          srv,
          token,
          Array.from({ length: n }, () => '/api/orders/1/stream'),
        );
  log(`peers ${group}: opened ${o.opened}/${n} in ${o.ms} ms${o.failed ? `, ${o.failed} failed (${o.firstError})` : ''}`);
  if (!o.opened) throw new Error(`peers: no ${group} connection could be opened: ${o.firstError}`);
}

/** One real order.updated message from the service, as its WebSocket subscribers get it. */
export async function sampleOf(clients: Clients, svc: Running, token: string): Promise<string> {
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

export interface SideResult {
  all: RunResult;
  rounds: RunResult[];
  /** The kernel's (system) share of the server process's CPU over the rounds. */
  sys: number;
}

/** The sides' subscribers are opened, then warm-up, then ROUNDS rounds alternating between the sides in the order given. */
export async function compare(clients: Clients, sides: Side[], kind: Kind): Promise<SideResult[]> {
  checkFds(sides, clients.procs.length);
  for (const side of sides) await open(clients, side.name, side.srv, side.token, kind, side.client, side.connections ?? PEER_CONNECTIONS);
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
      log(
        `peers ${kind} round ${round + 1}/${ROUNDS} ${side.name}: ${r.serverUsPerMsg.toFixed(2)} µs/msg, ${r.delivered}/${r.expected} delivered, server CPU ${(r.serverCpu * 100).toFixed(0)}%, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms`,
      );
      runs[i].push(r);
    }
  }
  for (const side of sides) await clients.all({ cmd: 'close', group: side.name });
  return sides.map((_, i) => ({ all: combineRuns(runs[i]), rounds: runs[i], sys: cpu[i].system / Math.max(1, cpu[i].user + cpu[i].system) }));
}

/**
 * Every side's subscribers are held at once: refuses to start when the client processes or a
 * server would run out of file descriptors (`ulimit -n`) halfway through opening them.
 */
function checkFds(sides: Side[], procs: number): void {
  const limit = openFilesLimit();
  const counts = sides.map((side) => side.connections ?? PEER_CONNECTIONS);
  const held = counts.reduce((a, b) => a + b, 0);
  const c = clientFds(held, procs, limit);
  if (!c.ok)
    throw new Error(
      `peers: ${sides.length} sides hold ${held} client connections, ${c.perProc} descriptors per client process, above ulimit -n ${limit}: ` + `set BENCH_RT_CLIENT_PROCS=${c.minProcs} or more, or raise ulimit -n`,
    );
  const most = Math.max(...counts);
  if (limit !== undefined && most + FD_SPARE > limit) throw new Error(`peers: a server holds ${most} connections, above ulimit -n ${limit} (less ${FD_SPARE} spare): raise ulimit -n`);
}

const perRound = (rs: RunResult[]) => rs.map((r) => r.serverUsPerMsg.toFixed(1)).join(', ');

export interface Side {
  name: string;
  srv: Running;
  token: string;
  client: WsClient;
  publish: Publish;
  /** Subscribers (default BENCH_RT_PEER_CONNECTIONS). */
  connections?: number;
}

/** Starts each server in turn, runs `fn` with all of them, stops them. */
export async function withServers<T>(starts: (() => Promise<Running>)[], fn: (srvs: Running[]) => Promise<T>, got: Running[] = []): Promise<T> {
  if (got.length === starts.length) return fn(got);
  return withServer(starts[got.length], (srv) => withServers(starts, fn, [...got, srv]));
}

const fig = (x: SideResult) => `${x.all.serverUsPerMsg.toFixed(2)} µs per delivered msg (p99 ${x.all.p99.toFixed(0)} ms)`;
const detail = (name: string, x: SideResult) => `${name}: p50 ${x.all.p50.toFixed(1)} ms, p99 ${x.all.p99.toFixed(1)} ms, system share ${(x.sys * 100).toFixed(0)}%, ${fanoutCpuNote(x.all)}${fanoutLost(x.all)}`;

export async function peersPhase(clients: Clients): Promise<Row[]> {
  return withServer(
    () => startService(SERVICE_ENV),
    async (svc) => {
      const token = await tokenOf(svc);
      const sample = await sampleOf(clients, svc, token);
      log(`peers payload: ${Buffer.byteLength(sample)} bytes`);
      const rows: Row[] = [];
      const bytes = Buffer.byteLength(sample);
      const key = (base: string) => scaledScenario(base, PEER_CONNECTIONS, DEFAULT_PEER_CONNECTIONS);
      for (const kind of KINDS) {
        const batchedEnv = { ...SERVICE_ENV, WRITE_DELAY_MS: String(PEER_WRITE_DELAY_MS) };
        // Both transports: the service, a service with WRITE_DELAY_MS, the peer and the floor
        // (one socket.write per delivery), all read by the lean reader. WebSocket adds Socket.IO
        // read by socket.io-client (a second server: a broadcast goes to every socket in the
        // room, so each reader needs its own) and a service with one subscriber, PATCHed at the
        // same rate: what the publish path (the PATCH: HTTP, auth, transaction, event row)
        // costs, which the peers' POST /publish does not do.
        const starts = [() => startService(batchedEnv), startPeer(kind), startFloor(kind), ...(kind === 'ws' ? [startPeer('ws'), () => startService(SERVICE_ENV)] : [])];
        const results = await withServers(starts, async ([batched, peer, floor, peer2, lone]) => {
          const batchedToken = await tokenOf(batched);
          const sides: (Side & { label: string })[] = [
            { name: `service-${kind}`, label: 'service', srv: svc, token, client: 'lean', publish: patchOrder1(svc, token) },
            { name: `service-batched-${kind}`, label: `service with WRITE_DELAY_MS=${PEER_WRITE_DELAY_MS}`, srv: batched, token: batchedToken, client: 'lean', publish: patchOrder1(batched, batchedToken) },
            { name: `peer-${kind}`, label: 'peer', srv: peer, token, client: kind === 'ws' ? 'sio-lean' : 'lean', publish: publishRaw(peer, sample) },
          ];
          if (kind === 'ws') sides.push({ name: 'peer-ws-sio-client', label: 'peer read by socket.io-client', srv: peer2, token, client: 'sio', publish: publishRaw(peer2, sample) });
          sides.push({ name: `floor-${kind}`, label: 'floor', srv: floor, token, client: 'lean', publish: publishRaw(floor, sample) });
          if (kind === 'ws') {
            const loneToken = await tokenOf(lone);
            sides.push({ name: 'service-1-subscriber-ws', label: 'service with 1 subscriber', srv: lone, token: loneToken, client: 'lean', publish: patchOrder1(lone, loneToken), connections: 1 });
          }
          const got = await compare(clients, sides, kind);
          return sides.map((side, i) => ({ name: side.name, label: side.label, fanout: side.connections === undefined, result: got[i] }));
        });
        const of = (name: string) => results.find((r) => r.name === name)?.result;
        const [s, b, p, floor] = [`service-${kind}`, `service-batched-${kind}`, `peer-${kind}`, `floor-${kind}`].map((name) => of(name)!);
        const pClient = of('peer-ws-sio-client');
        // The lone service's rounds are per PATCH, not per delivery: not in the by-round figures.
        const lone = of('service-1-subscriber-ws');
        const byRound = results
          .filter((r) => r.fanout)
          .map((r) => `${r.label} ${perRound(r.result.rounds)}`)
          .join('; ');
        const common = `${ROUNDS} x ${SECONDS} s alternating (${results.map((r) => r.label).join(', ')}); µs/msg by round: ${byRound}`;
        const peerText =
          kind === 'ws'
            ? `Socket.IO 4 (bench/baseline/socketio.ts, connectionStateRecovery on, websocket transport): io.to(room).emit of the same ${bytes}-byte message, same rate, read by the same lean reader as the service (Socket.IO's packets)`
            : `better-sse (bench/baseline/better-sse.ts): channel.broadcast of the same ${bytes}-byte message, same rate`;
        const what =
          kind === 'ws'
            ? `${s.all.subscribers} WebSocket subscribers of order:1 (lean client), PATCH /orders/1 at ${PEER_RATE}/s; server CPU per delivered message`
            : `${s.all.subscribers} SSE streams of order 1, PATCH /orders/1 at ${PEER_RATE}/s; server CPU per delivered message`;
        const goalOf = (ratio: number) => (kind === 'ws' ? `<= 0.50x Socket.IO (${ratio <= 0.5 ? 'met' : 'missed'})` : `below better-sse (${ratio < 1 ? 'met' : 'missed'})`);
        const peerNotes = [detail('peer', p), ...(pClient ? [`${detail('peer read by socket.io-client', pClient)} (${(s.all.serverUsPerMsg / pClient.all.serverUsPerMsg).toFixed(2)}x of it)`] : [])];
        const floorFile = `bench/baseline/${kind}-floor.ts`;
        const floorNote = [`${detail(`floor (${floorFile})`, floor)}: ${(floor.all.serverUsPerMsg / p.all.serverUsPerMsg).toFixed(2)}x the peer`];
        // The lone service's CPU per PATCH, spread over the PEER_CONNECTIONS deliveries a PATCH makes in the fan-out.
        const publishNote = lone
          ? [
              `publish path (a service with 1 subscriber, PATCHed at the same rate): ${(lone.all.serverUsPerMsg / 1000).toFixed(2)} ms of server CPU per PATCH, ${(lone.all.serverUsPerMsg / PEER_CONNECTIONS).toFixed(2)} µs per delivered message at ${PEER_CONNECTIONS} subscribers`,
            ]
          : [];
        const peerKey = key(`${kind}-fanout-cpu-peer`);
        for (const [x, scenario, label] of [
          [s, peerKey, what],
          [b, key(`${kind}-fanout-cpu-peer-batched`), `as ${peerKey}, service with WRITE_DELAY_MS=${PEER_WRITE_DELAY_MS} (writes to a connection batched for up to ${PEER_WRITE_DELAY_MS} ms)`],
        ] as const) {
          const ratio = x.all.serverUsPerMsg / p.all.serverUsPerMsg;
          rows.push({
            scenario,
            service: label,
            baseline: peerText,
            serviceFig: fig(x),
            baselineFig: fig(p),
            ratio,
            goal: goalOf(ratio),
            notes: [common, detail('service', x), ...peerNotes, ...floorNote, ...publishNote].join('; '),
          });
        }
        rows.push({
          scenario: key(`${kind}-fanout-cpu-floor`),
          service:
            kind === 'ws'
              ? `the floor: ${floorFile}, a ws server that only writes one pre-built frame per delivery (one socket.write), same subscribers, clients and rate`
              : `the floor: ${floorFile}, a node:http server that only writes one pre-built event (one HTTP chunk) per delivery (one socket.write), same streams, reader and rate`,
          baseline: peerText,
          serviceFig: fig(floor),
          baselineFig: fig(p),
          ratio: floor.all.serverUsPerMsg / p.all.serverUsPerMsg,
          goal: 'recorded: what one write system call per delivered message costs here',
          notes: [
            common,
            detail('floor', floor),
            `service ${(s.all.serverUsPerMsg / floor.all.serverUsPerMsg).toFixed(2)}x the floor (${(s.all.serverUsPerMsg - floor.all.serverUsPerMsg).toFixed(2)} µs per delivered message above it)`,
            ...publishNote,
          ].join('; '),
        });
      }
      return rows;
    },
  );
}
