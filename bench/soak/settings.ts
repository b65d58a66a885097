/**
 * The soak's settings: each one a flag (`--ws 200` or `--ws=200`) or an environment
 * variable (`SOAK_WS=200`), the flag winning; defaults are the full soak's.
 */
import { envNameOf, flagBool, readFlags } from '../lib/flags';

export type Mode = 'embedded' | 'pg-redis';
/** pg-redis only: the engine stopped under load (bench/soak/outage.ts), or none. */
export type Outage = 'none' | 'postgres' | 'redis';

export interface Settings {
  mode: Mode;
  /** Seconds of load in all (warm-up included). */
  duration: number;
  /** Seconds after which the memory trend is judged (the rings and caches have filled). */
  warmup: number;
  ws: number;
  sse: number;
  orders: number;
  /** Percent of the subscribers cut (client side) and resumed every second. */
  churn: number;
  /** Requests per second of each kind. */
  writes: number;
  reads: number;
  lists: number;
  graphql: number;
  /** Share of the reads sent with If-None-Match, and of the writes that are creates (POST with Idempotency-Key). */
  conditionalShare: number;
  createShare: number;
  /** Seconds between memory samples. */
  sample: number;
  /** Seconds after the load stops (and the subscribers close) before the last samples. */
  cooldown: number;
  /** Targets: memory slope (MB per 10 minutes) and return to the warm level (percent). */
  slopeLimitMb: number;
  returnPct: number;
  /** pg-redis only: kill -9 one instance at `failoverAt` seconds. */
  failover: boolean;
  failoverAt: number;
  /** pg-redis only: stop this engine at `outageAt` seconds for `outageFor` seconds (the soak's own PostgreSQL and Redis). */
  outage: Outage;
  outageAt: number;
  outageFor: number;
  /**
   * Where heap figures are scraped: `{metrics}` is each instance's operator listener (from its
   * banner), `{url}` its public base URL, `{i}` its index.
   */
  metricsUrl: string;
  /** Two heap snapshots of the (surviving) server: after warm-up and at the end of the load. */
  heapSnapshots: boolean;
  clientProcs: number;
  /** Reconnect backoff base (ms): delay = base * 2^attempt + random(0, base). */
  backoffMs: number;
  /** Seconds allowed for every subscriber to reach its order's final revision. */
  settle: number;
  write: boolean;
}

/** Each flag: its default (undefined: computed) and range; booleans are flags without a value. */
const NUMBERS = {
  duration: ['duration', 2700, 1],
  warmup: ['warmup', 900, 0],
  ws: ['ws', 5000, 0],
  sse: ['sse', 1000, 0],
  orders: ['orders', 100, 1],
  churn: ['churn', 2, 0, 100],
  writes: ['writes', 40, 0],
  reads: ['reads', 200, 0],
  lists: ['lists', 20, 0],
  graphql: ['graphql', 50, 0],
  conditionalShare: ['conditional-share', 0.5, 0, 1],
  createShare: ['create-share', 0.05, 0, 1],
  sample: ['sample', 10, 1],
  cooldown: ['cooldown', 60, 0],
  slopeLimitMb: ['slope-limit-mb', 1, 0],
  returnPct: ['return-pct', 10, 0],
  failoverAt: ['failover-at', undefined, 1],
  outageAt: ['outage-at', undefined, 1],
  outageFor: ['outage-for', 10, 1],
  clientProcs: ['client-procs', 2, 1, 64],
  backoffMs: ['backoff-ms', 100, 1],
  settle: ['settle', 120, 1],
} as const satisfies Record<string, readonly [string, number | undefined, number, number?]>;
const BOOLS = { failover: 'failover', heapSnapshots: 'heap-snapshots', write: 'write' } as const;
const STRINGS = { mode: ['mode', 'embedded'], metricsUrl: ['metrics-url', '{metrics}/metrics'], outage: ['outage', 'none'] } as const;

const FLAGS: { flag: string; bool: boolean; def?: string | number }[] = [
  ...Object.values(STRINGS).map(([flag, def]) => ({ flag, bool: false, def })),
  ...Object.values(NUMBERS).map(([flag, def]) => ({ flag, bool: false, def })),
  ...Object.values(BOOLS).map((flag) => ({ flag, bool: true })),
];

const envName = envNameOf('SOAK');

/** Every flag with its variable and default, for --help and the report. */
export const usage = (): string => FLAGS.map((f) => `  --${f.flag}${f.bool ? '' : ' <v>'}  (${envName(f.flag)}${f.def === undefined ? '' : `, default ${f.def}`})`).join('\n');

/**
 * Seconds until every order's replay ring is full (REPLAY_RATE x REPLAY_WINDOW_S events at
 * the updates per order per second): memory grows until then by design, so warm-up should
 * cover it. `env` is the servers' environment (the service's defaults otherwise).
 */
export function ringFillSeconds(s: Pick<Settings, 'orders' | 'writes' | 'createShare'>, env: Record<string, string | undefined>): number {
  const ring = Number(env.REPLAY_RATE ?? 1) * Number(env.REPLAY_WINDOW_S ?? 300);
  const perOrder = (s.writes * (1 - s.createShare)) / s.orders;
  return perOrder > 0 ? ring / perOrder : Infinity;
}

function outageOf(v: string): Outage {
  if (v === 'none' || v === 'postgres' || v === 'redis') return v;
  throw new Error(`--outage is none, postgres or redis, not ${v}`);
}

/** Parses flags over environment over defaults; throws on anything unknown or out of range. */
export function settingsOf(argv: string[], env: Record<string, string | undefined>): Settings {
  const raw = readFlags(argv, FLAGS, env, envName);
  const num = (k: keyof typeof NUMBERS): number | undefined => {
    const [flag, def, min, max = Infinity] = NUMBERS[k];
    const r = raw(flag);
    if (r === undefined) return def;
    const v = Number(r);
    if (r.trim() === '' || !Number.isFinite(v) || v < min || v > max) throw new Error(`--${flag} must be a number in [${min}, ${max}], not ${r}`);
    return v;
  };
  const must = (k: keyof typeof NUMBERS): number => num(k) ?? NaN;
  const bool = (k: keyof typeof BOOLS): boolean => flagBool(BOOLS[k], raw(BOOLS[k]));
  const str = (k: keyof typeof STRINGS): string => raw(STRINGS[k][0]) ?? STRINGS[k][1];
  const mode = str('mode');
  if (mode !== 'embedded' && mode !== 'pg-redis') throw new Error(`--mode is embedded or pg-redis, not ${mode}`);
  const duration = must('duration');
  const s: Settings = {
    mode,
    duration,
    warmup: must('warmup'),
    ws: must('ws'),
    sse: must('sse'),
    orders: must('orders'),
    churn: must('churn'),
    writes: must('writes'),
    reads: must('reads'),
    lists: must('lists'),
    graphql: must('graphql'),
    conditionalShare: must('conditionalShare'),
    createShare: must('createShare'),
    sample: must('sample'),
    cooldown: must('cooldown'),
    slopeLimitMb: must('slopeLimitMb'),
    returnPct: must('returnPct'),
    failover: bool('failover'),
    failoverAt: num('failoverAt') ?? Math.round(duration / 2),
    outage: outageOf(str('outage')),
    outageAt: num('outageAt') ?? Math.round(duration / 3),
    outageFor: must('outageFor'),
    metricsUrl: str('metricsUrl'),
    heapSnapshots: bool('heapSnapshots'),
    clientProcs: must('clientProcs'),
    backoffMs: must('backoffMs'),
    settle: must('settle'),
    write: bool('write'),
  };
  if (s.failover && s.mode !== 'pg-redis') throw new Error('--failover needs --mode pg-redis (two instances)');
  if (s.failover && s.failoverAt >= s.duration) throw new Error('--failover-at must fall inside --duration');
  if (s.warmup >= s.duration) throw new Error('--warmup must be shorter than --duration');
  if (s.outage !== 'none' && s.mode !== 'pg-redis') throw new Error('--outage needs --mode pg-redis (two instances on PostgreSQL and Redis)');
  if (s.outage !== 'none' && s.failover) throw new Error('--outage and --failover are separate runs');
  if (s.outage !== 'none' && s.outageAt + s.outageFor + 30 >= s.duration) throw new Error('--outage-at + --outage-for must fall inside --duration, 30 s before its end (the time allowed to recover)');
  return s;
}
