/**
 * The service in one of its deployments, each started fresh (bench/scaleout.ts, and the
 * fan-out with workers of bench/realtime.ts):
 *
 * - `embedded`: SQLite in a fresh DATA_DIR, in-process bus, one process (as `npm start`).
 * - `sqlite-redis`: that SQLite file shared by the WORKERS workers, bus on Redis.
 * - `postgres-redis`: PostgreSQL in a fresh DATABASE_SCHEMA (created by the service's
 *   migrations, dropped with CASCADE when the deployment stops) and Redis.
 *
 * Every deployment that uses Redis gets a REDIS_PREFIX of its own, so two deployments under
 * test never hear each other's events. Stopping sends SIGTERM to the process started (the
 * cluster primary, which stops its workers), then waits for every process of its tree.
 * `restartDeployment` stops it with a signal of the caller's choice (SIGTERM drains, SIGKILL
 * does not) and starts it again on the same port, DATA_DIR and environment (bench/storm.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { treeOf } from './cpu';
import { startService, type Running } from './server';

export type DeploymentKind = 'embedded' | 'sqlite-redis' | 'postgres-redis';

export const DATABASE_URL = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';

export interface Deployment {
  kind: DeploymentKind;
  workers: number;
  /** e.g. "PostgreSQL + Redis, WORKERS=2". */
  label: string;
  srv: Running;
  /** The demo account's token the service printed. */
  token: string;
  /** The PostgreSQL schema (postgres-redis only). */
  schema?: string;
  /** The environment it was started with (beside the bench's own), so a sibling instance can share its store and bus. */
  env: Record<string, string>;
  /** Its DATA_DIR, kept across restarts and removed by `stop`. */
  dataDir: string;
  /** The started process and its descendants (primary and workers), as they are now. */
  pids(): number[];
  stop(): Promise<void>;
}

const live = new Set<Deployment>();
let counter = 0;

export function labelOf(kind: DeploymentKind, workers: number): string {
  if (kind === 'embedded') return 'embedded (SQLite, in-process bus, 1 process)';
  return `${kind === 'postgres-redis' ? 'PostgreSQL' : 'SQLite'} + Redis, WORKERS=${workers}`;
}

/** Drops a deployment's schema from the database it was created in (`url`: its DATABASE_URL). */
async function dropSchema(schema: string, url: string): Promise<void> {
  const pg = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await pg.connect();
  try {
    await pg.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await pg.end();
  }
}

/** Whether process `pid` is still running. */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Starts a fresh deployment; `env` is added to (and may override) what the kind sets. */
export async function startDeployment(kind: DeploymentKind, workers: number, env: Record<string, string> = {}): Promise<Deployment> {
  if (kind === 'embedded' && workers !== 1) throw new Error('the embedded deployment is one process');
  const n = ++counter;
  const schema = kind === 'postgres-redis' ? `bench_${process.pid}_${n}` : undefined;
  const own: Record<string, string> = { WORKERS: String(workers) };
  if (kind !== 'embedded') Object.assign(own, { REDIS_URL, REDIS_PREFIX: `bench-${process.pid}-${n}:` });
  // DEMO=1: a fresh schema gets the demo data and prints its token (DATABASE_URL alone seeds nothing).
  if (schema) Object.assign(own, { DATABASE_URL, DATABASE_SCHEMA: schema, DEMO: '1' });
  const dataDir = mkdtempSync(join(tmpdir(), 'orderline-bench-'));
  let srv: Running;
  try {
    srv = await startService({ ...own, ...env }, { dataDir });
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    if (schema) await dropSchema(schema, { ...own, ...env }.DATABASE_URL);
    throw err;
  }
  let stopped: Promise<void> | undefined;
  const d: Deployment = {
    kind,
    workers,
    label: labelOf(kind, workers),
    srv,
    token: '',
    schema,
    env: { ...own, ...env },
    dataDir,
    pids: () => treeOf(d.srv.pid),
    stop: () =>
      (stopped ??= (async () => {
        const tree = treeOf(d.srv.pid);
        await d.srv.stop();
        for (let i = 0; i < 120 && tree.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
        for (const p of tree.filter(alive)) process.kill(p, 'SIGKILL');
        rmSync(dataDir, { recursive: true, force: true });
        if (schema) await dropSchema(schema, d.env.DATABASE_URL);
        live.delete(d);
      })()),
  };
  live.add(d);
  try {
    // A cluster primary prints the token once every worker listens.
    d.token = process.env.BENCH_TOKEN ?? (await srv.waitForOutput(/demo token/, 30_000)).trim().split(' ').pop()!;
    const got = d.pids().length;
    if (got !== (workers > 1 ? workers + 1 : 1)) throw new Error(`${d.label}: ${got} processes, expected ${workers > 1 ? workers + 1 : 1}`);
  } catch (err) {
    await d.stop();
    throw err;
  }
  return d;
}

/** When a restart's steps happened (Date.now() ms). */
export interface Restart {
  signal: NodeJS.Signals;
  signalAt: number;
  /** The old process has exited. */
  exitedAt: number;
  /** The new one was spawned, and first answered /healthz. */
  startedAt: number;
  listeningAt: number;
}

/**
 * Stops `d`'s process with `signal` (SIGTERM: the service drains; SIGKILL: it does not) and,
 * once it has exited, starts it again on the same port, DATA_DIR and environment, changed
 * by `env` (a value sets the variable, undefined unsets it: e.g. ACCEPT_RATE back to the
 * service's default); `d.srv` is the new process afterwards. One process only.
 */
export async function restartDeployment(d: Deployment, signal: NodeJS.Signals, env: Record<string, string | undefined> = {}): Promise<Restart> {
  if (d.workers !== 1) throw new Error('restartDeployment restarts one process, not a cluster');
  const port = Number(new URL(d.srv.url).port);
  const signalAt = Date.now();
  await d.srv.kill(signal);
  const exitedAt = Date.now();
  const next: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...d.env, ...env })) if (v !== undefined) next[k] = v;
  d.env = next;
  // The demo data is loaded once: a restart finds it and mints no token.
  d.srv = await startService(d.env, { port, dataDir: d.dataDir });
  return { signal, signalAt, exitedAt, startedAt: d.srv.startedAt, listeningAt: d.srv.readyAt };
}

/**
 * Another instance of `d` (not a worker: its own process on its own port) on d's store and
 * bus: the same DATABASE_SCHEMA and REDIS_PREFIX, no demo data of its own. Stop it before
 * `d`, which drops the schema.
 */
export function startSibling(d: Deployment, env: Record<string, string> = {}): Promise<Running> {
  if (d.kind !== 'postgres-redis') throw new Error('a sibling instance shares PostgreSQL and Redis');
  return startService({ ...d.env, DEMO: '0', ...env });
}

/** Stops every deployment still running (and drops its schema). */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((d) => d.stop()));
}
