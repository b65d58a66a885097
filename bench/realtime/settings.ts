/** Realtime bench settings (environment) and small helpers shared by its phases. */
import { readFileSync } from 'node:fs';

export const num = (name: string, def: number) => {
  const v = Number(process.env[name] ?? def);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`);
  return v;
};
export const CONNECTIONS = num('BENCH_RT_CONNECTIONS', 10_000);
export const PROCS = num('BENCH_RT_CLIENT_PROCS', 2);
export const OPEN_CONCURRENCY = num('BENCH_RT_OPEN_CONCURRENCY', 100); // per client process
export const WARM_CONNECTIONS = num('BENCH_RT_WARM_CONNECTIONS', 200);
export const SETTLE_S = num('BENCH_RT_SETTLE_SECONDS', 5);
export const SAMPLES = num('BENCH_RT_SAMPLES', 5);
export const FANOUT_CONNECTIONS = num('BENCH_RT_FANOUT_CONNECTIONS', CONNECTIONS);
export const SECONDS = num('BENCH_RT_SECONDS', 5);
export const ROUNDS = num('BENCH_RT_ROUNDS', 2);
export const WINDOW = num('BENCH_RT_WINDOW', 2);
export const RATE = num('BENCH_RT_RATE', 2);
/** The fan-out settings, for the rows of other benches that run fanoutCompare. */
export const FANOUT = { connections: FANOUT_CONNECTIONS, seconds: SECONDS, rounds: ROUNDS, window: WINDOW, rate: RATE, clientProcs: PROCS };
export const SLOW_CONNECTIONS = num('BENCH_RT_SLOW_CONNECTIONS', 1000);
export const SLOW_RATE = num('BENCH_RT_SLOW_RATE', 20);
export const SLOW_SECONDS = num('BENCH_RT_SLOW_SECONDS', 5);
/** The transports of the memory and peers phases (`ws,sse`; one of them while exploring). */
export const KINDS = (process.env.BENCH_RT_KINDS ?? 'ws,sse').split(',').map((k) => {
  if (k !== 'ws' && k !== 'sse') throw new Error('BENCH_RT_KINDS is a comma-separated list of ws and sse');
  return k;
});
/** Measure the peers (Socket.IO, better-sse) beside the bare baselines: BENCH_RT_PEERS=0 skips them. */
export const PEERS = process.env.BENCH_RT_PEERS !== '0';
/**
 * The peer fan-out: subscribers of order:1 per server, writes/s (the load the Socket.IO target
 * is stated at). Rows measured at another count than the default carry it in their scenario key.
 */
export const DEFAULT_PEER_CONNECTIONS = 2000;
export const PEER_CONNECTIONS = num('BENCH_RT_PEER_CONNECTIONS', DEFAULT_PEER_CONNECTIONS);
export const PEER_RATE = num('BENCH_RT_PEER_RATE', 20);
/** The service's WRITE_DELAY_MS in the peers phase's batched side. */
export const PEER_WRITE_DELAY_MS = num('BENCH_RT_PEER_WRITE_DELAY_MS', 100);
/** The WebSocket client of the fan-out and slow phases: `lean` (raw socket, minimal frame reader) or `ws`. */
export const STREAM_CLIENT = (process.env.BENCH_RT_STREAM_CLIENT ?? 'lean') as 'ws' | 'lean';
if (STREAM_CLIENT !== 'ws' && STREAM_CLIENT !== 'lean') throw new Error('BENCH_RT_STREAM_CLIENT must be lean or ws');

/** New stream connections are rate-limited by default (200/s, burst 400): lifted for the bench. */
export const SERVICE_ENV = { ACCEPT_RATE: '1000000', ACCEPT_BURST: '1000000' };
export const ORDERS = 5; // demo orders 1-5 of account demo
export const GQL_CEILING = '{ user(id: "u1") { posts { comments { author { name } } } } }';

/** Descriptors a process keeps besides its connections (stdio, IPC, libuv's, the service's files), with room to spare. */
export const FD_SPARE = 200;

/**
 * Whether `connections` client connections, dealt round-robin over `procs` client processes,
 * fit under each process's open-files limit (`limit`; undefined: unknown, taken as enough),
 * and the fewest processes that would.
 */
export function clientFds(connections: number, procs: number, limit: number | undefined): { perProc: number; ok: boolean; minProcs: number } {
  const perProc = Math.ceil(connections / procs) + FD_SPARE;
  if (limit === undefined) return { perProc, ok: true, minProcs: procs };
  const room = limit - FD_SPARE;
  return { perProc, ok: perProc <= limit, minProcs: room > 0 ? Math.ceil(connections / room) : Infinity };
}

/** The soft open-files limit (`ulimit -n`) of this process, which the servers and client processes it starts inherit; undefined where /proc has no answer. */
export function openFilesLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m && m[1] !== 'unlimited' ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
export const log = (s: string) => console.error(`  ${s}`);
