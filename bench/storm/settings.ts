/**
 * The reconnect storm's settings: each one a flag (`--clients 2500` or `--clients=2500`) or
 * an environment variable (`STORM_CLIENTS=2500`), the flag winning. The accept limiter's
 * defaults are the service's own (src/config.ts), so a run without flags measures what a
 * deployment gets out of the box.
 */
import { DEFAULT_BACKOFF } from '@orderline/sdk/realtime';
import { parseConfig } from '../../src/config';
import { envNameOf, flagBool, readFlags } from '../lib/flags';

/** The storms: a graceful restart, a crash, and a crash into an instance with the limiter lifted (its accept capacity). */
export type ScenarioName = 'sigterm' | 'kill' | 'capacity';
export const SCENARIOS: ScenarioName[] = ['sigterm', 'kill', 'capacity'];

export interface Settings {
  /** Subscriber counts, one full run each (`--sizes 2500,5000,10000`; default `--clients`). */
  sizes: number[];
  orders: number;
  /** PATCHes per second (If-Match, one writer per order), the whole run. */
  writes: number;
  /** The probe's GETs of an order per second (one client on kept-alive connections). */
  probe: number;
  /** The limiter of every restarted instance (the service's defaults unless set). */
  acceptRate: number;
  acceptBurst: number;
  /** Whether they are the service's defaults (for the report). */
  acceptDefaults: boolean;
  scenarios: ScenarioName[];
  clientProcs: number;
  /**
   * The subscriber processes' scheduling priority (nice, 0-19). The clients share this
   * machine's cores with the server; in a deployment they are other machines. At 0 the
   * 10,000 reconnecting clients kept the server's main thread waiting for a core about 60 %
   * of the time (its /proc schedstat); at 10 they take what the server leaves.
   */
  clientsNice: number;
  /** The subscribers' reconnect backoff (the SDK's: base x 2^attempt + random(0, base), at most cap). */
  backoffMs: number;
  backoffCapMs: number;
  /** Seconds to wait for every subscriber to be back after a restart before giving up on it. */
  timeout: number;
  /** Seconds allowed at the end for every subscriber to reach its order's final revision. */
  settle: number;
  /** Targets. */
  goalRefusals: number;
  goalBackS: number;
  goalP99Ms: number;
  write: boolean;
}

const NUMBERS = {
  clients: ['clients', 10_000, 1],
  orders: ['orders', 100, 1],
  writes: ['writes', 20, 0],
  probe: ['probe', 20, 1],
  acceptRate: ['accept-rate', undefined, 1],
  acceptBurst: ['accept-burst', undefined, 1],
  clientProcs: ['client-procs', 2, 1, 64],
  clientsNice: ['clients-nice', 10, 0, 19],
  backoffMs: ['backoff-ms', DEFAULT_BACKOFF.baseMs, 1],
  backoffCapMs: ['backoff-cap-ms', DEFAULT_BACKOFF.capMs, 1],
  timeout: ['timeout', 180, 1],
  settle: ['settle', 60, 1],
  goalRefusals: ['goal-refusals', 2, 0],
  goalBackS: ['goal-back-s', 25, 0],
  goalP99Ms: ['goal-p99-ms', 100, 0],
} as const satisfies Record<string, readonly [string, number | undefined, number, number?]>;
const LISTS = { sizes: 'sizes', scenarios: 'scenarios' } as const;

const FLAGS: { flag: string; bool: boolean; def?: string | number }[] = [
  ...Object.values(NUMBERS).map(([flag, def]) => ({ flag, bool: false, def })),
  { flag: LISTS.sizes, bool: false, def: 'the --clients' },
  { flag: LISTS.scenarios, bool: false, def: SCENARIOS.join(',') },
  { flag: 'write', bool: true },
];

const envName = envNameOf('STORM');

/** The service's own limiter defaults (ACCEPT_RATE, ACCEPT_BURST unset). */
export function serviceAcceptDefaults(): { rate: number; burst: number } {
  const parsed = parseConfig({});
  if (!parsed.ok) throw new Error(parsed.error);
  return { rate: parsed.config.realtime.acceptRate, burst: parsed.config.realtime.acceptBurst };
}

/** Every flag with its variable and default, for --help. */
export const usage = (): string => {
  const d = serviceAcceptDefaults();
  return FLAGS.map((f) => {
    const def = f.flag === 'accept-rate' ? `${d.rate} (the service's)` : f.flag === 'accept-burst' ? `${d.burst} (the service's)` : f.def;
    return `  --${f.flag}${f.bool ? '' : ' <v>'}  (${envName(f.flag)}${def === undefined ? '' : `, default ${def}`})`;
  }).join('\n');
};

/** Parses flags over environment over defaults; throws on anything unknown or out of range. */
export function settingsOf(argv: string[], env: Record<string, string | undefined>): Settings {
  const raw = readFlags(argv, FLAGS, env, envName);
  const number = (flag: string, r: string, min: number, max: number): number => {
    const v = Number(r);
    if (r.trim() === '' || !Number.isInteger(v) || v < min || v > max) throw new Error(`--${flag} must be an integer in [${min}, ${max}], not ${r}`);
    return v;
  };
  const num = (k: keyof typeof NUMBERS): number | undefined => {
    const [flag, def, min, max = Number.MAX_SAFE_INTEGER] = NUMBERS[k];
    const r = raw(flag);
    return r === undefined ? def : number(flag, r, min, max);
  };
  const must = (k: keyof typeof NUMBERS): number => num(k) ?? NaN;
  const list = (flag: string): string[] | undefined =>
    raw(flag)
      ?.split(',')
      .map((x) => x.trim())
      .filter(Boolean);

  const sizes = list(LISTS.sizes)?.map((x) => number(LISTS.sizes, x, 1, 1_000_000)) ?? [must('clients')];
  if (sizes.length === 0) throw new Error('--sizes names no size');
  const scenarios = list(LISTS.scenarios) ?? SCENARIOS;
  for (const x of scenarios) if (!(SCENARIOS as string[]).includes(x)) throw new Error(`--scenarios: ${x} is not one of ${SCENARIOS.join(', ')}`);
  const write = flagBool('write', raw('write'));
  const d = serviceAcceptDefaults();
  const acceptRate = num('acceptRate') ?? d.rate;
  const acceptBurst = num('acceptBurst') ?? d.burst;
  return {
    sizes,
    orders: must('orders'),
    writes: must('writes'),
    probe: must('probe'),
    acceptRate,
    acceptBurst,
    acceptDefaults: acceptRate === d.rate && acceptBurst === d.burst,
    // Always in the order graceful, crash, capacity: the last one leaves the limiter lifted.
    scenarios: SCENARIOS.filter((x) => scenarios.includes(x)),
    clientProcs: must('clientProcs'),
    clientsNice: must('clientsNice'),
    backoffMs: must('backoffMs'),
    backoffCapMs: must('backoffCapMs'),
    timeout: must('timeout'),
    settle: must('settle'),
    goalRefusals: must('goalRefusals'),
    goalBackS: must('goalBackS'),
    goalP99Ms: must('goalP99Ms'),
    write,
  };
}

/** The command that repeats a run with these settings. */
export function commandOf(s: Settings): string {
  const flags = [
    s.sizes.length === 1 ? `--clients ${s.sizes[0]}` : `--sizes ${s.sizes.join(',')}`,
    `--orders ${s.orders}`,
    `--writes ${s.writes}`,
    `--probe ${s.probe}`,
    ...(s.acceptDefaults ? [] : [`--accept-rate ${s.acceptRate} --accept-burst ${s.acceptBurst}`]),
    ...(s.scenarios.length === SCENARIOS.length ? [] : [`--scenarios ${s.scenarios.join(',')}`]),
    // Always: the default was 0 before 2026-11-26's night, so older commands ran the clients at 0.
    `--clients-nice ${s.clientsNice}`,
  ];
  return `npm run storm -- ${flags.join(' ')}`;
}
