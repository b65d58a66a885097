/**
 * Where the machine's CPU went during a measurement (Linux /proc): the whole machine from
 * /proc/stat and named groups of processes (server, load generator, PostgreSQL, Redis, ...)
 * from /proc/<pid>/stat. What the groups do not explain is "other": processes outside the
 * bench (another test run on the machine) and kernel time not charged to a process
 * (interrupts, softirq network processing of loopback traffic).
 *
 * Figures are in cores: 1.0 = one core busy for the whole window.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { cpuUsOf } from './realtime-proc';

const TICK_US = 10_000; // USER_HZ is 100 on Linux

/** Busy CPU time of the whole machine in µs, all CPUs (user, nice, system, irq, softirq). */
export function machineBusyUs(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq] = f;
  return (user + nice + system + irq + softirq) * TICK_US;
}

const pids = (): number[] =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);

const statFields = (pid: number): string[] | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return [stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), ...stat.slice(stat.lastIndexOf(')') + 2).split(' ')];
  } catch {
    return undefined; // exited meanwhile
  }
};

/** `pid` and all its descendants (e.g. a node:cluster primary and its workers). */
export function treeOf(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const p of pids()) {
    const f = statFields(p);
    if (f) parent.set(p, Number(f[2]));
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) for (const [p, pp] of parent) if (pp === out[i]) out.push(p);
  return out;
}

/** Pids whose command name (/proc/<pid>/stat comm, e.g. `postgres`, `redis-server`) matches. */
export function pidsNamed(re: RegExp): number[] {
  return pids().filter((p) => {
    const f = statFields(p);
    return f !== undefined && re.test(f[0]);
  });
}

const cpuOrZero = (pid: number): number => {
  try {
    return cpuUsOf(pid);
  } catch {
    return 0;
  }
};

export interface CpuShares {
  /** Seconds measured. */
  wallS: number;
  /** Cores the machine has. */
  cores: number;
  /** Busy cores, whole machine. */
  machine: number;
  /** Busy cores per group (a process counted in the first group that names it). */
  groups: Record<string, number>;
  /** machine - sum(groups): processes outside the groups and kernel time charged to none. */
  other: number;
}

/**
 * Starts a window; the returned function ends it. Groups are resolved at both ends (a
 * process that appears in the window counts from zero; one that exits is lost).
 */
export function cpuWindow(groups: Record<string, () => number[]>): () => CpuShares {
  const snapshot = () => {
    const seen = new Set<number>();
    const per: Record<string, Map<number, number>> = {};
    for (const [name, list] of Object.entries(groups)) {
      per[name] = new Map();
      for (const p of list()) {
        if (seen.has(p)) continue;
        seen.add(p);
        per[name].set(p, cpuOrZero(p));
      }
    }
    return per;
  };
  const t0 = process.hrtime.bigint();
  const m0 = machineBusyUs();
  const s0 = snapshot();
  return () => {
    const s1 = snapshot();
    const m1 = machineBusyUs();
    const wallUs = Number(process.hrtime.bigint() - t0) / 1000;
    const out: Record<string, number> = {};
    for (const [name, now] of Object.entries(s1)) {
      let us = 0;
      for (const [p, v] of now) us += v - (s0[name].get(p) ?? 0);
      out[name] = us / wallUs;
    }
    const machine = (m1 - m0) / wallUs;
    return { wallS: wallUs / 1e6, cores: cpus().length, machine, groups: out, other: machine - Object.values(out).reduce((a, b) => a + b, 0) };
  };
}

/** Busy cores of the whole machine over `ms`. */
export async function machineBusy(ms: number): Promise<number> {
  const end = cpuWindow({});
  await new Promise((r) => setTimeout(r, ms));
  return end().machine;
}

/**
 * Waits (up to `maxMs`) until the machine is quiet: less than `threshold` cores busy over
 * `windowMs`. Resolves with the last reading and whether it was quiet.
 */
export async function waitQuiet(threshold: number, maxMs: number, windowMs = 500): Promise<{ quiet: boolean; busy: number; waitedMs: number }> {
  const start = Date.now();
  for (;;) {
    const busy = await machineBusy(windowMs);
    if (busy < threshold || Date.now() - start >= maxMs) return { quiet: busy < threshold, busy, waitedMs: Date.now() - start };
  }
}

export const fmtCores = (c: number): string => c.toFixed(2);

/** e.g. "server 1.52, load generator 0.35, postgres 0.10, other 0.03 (machine 2.00 of 2)". */
export function fmtShares(s: CpuShares, names: Record<string, string> = {}): string {
  const parts = Object.entries(s.groups)
    .filter(([, v]) => v >= 0.005)
    .map(([k, v]) => `${names[k] ?? k} ${fmtCores(v)}`);
  return `${[...parts, `other ${fmtCores(Math.max(0, s.other))}`].join(', ')} (machine ${fmtCores(s.machine)} of ${s.cores})`;
}

/** The mean of several windows' shares (groups named in the first). */
export function meanShares(list: CpuShares[]): CpuShares {
  const mean = (f: (s: CpuShares) => number) => list.reduce((a, s) => a + f(s), 0) / list.length;
  const groups: Record<string, number> = {};
  for (const k of Object.keys(list[0]?.groups ?? {})) groups[k] = mean((s) => s.groups[k] ?? 0);
  return { wallS: list.reduce((a, s) => a + s.wallS, 0), cores: list[0]?.cores ?? cpus().length, machine: mean((s) => s.machine), groups, other: mean((s) => s.other) };
}
