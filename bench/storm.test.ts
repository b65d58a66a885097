import { readFileSync } from 'node:fs';
import { BENCHMARKS_FILE } from './lib/report';
import type { Restart } from './lib/deployment';
import { failureOf, type Attempt } from './soak/load';
import { zeroCounts } from './soak/seqs';
import { passed } from './soak/verdict';
import { MARKERS, stormPart, stormRow, TITLE, writeStorm, type SizeResult } from './storm/report';
import { commandOf, serviceAcceptDefaults, settingsOf } from './storm/settings';
import { admissionOf, latencyBetween, outcomesBetween, quantile, recoveryOf, refusalsOf, stormTargets, unanswered, type StormResult } from './storm/verdict';

const restart = (signal: NodeJS.Signals): Restart => ({ signal, signalAt: 10_000, exitedAt: 10_200, startedAt: 10_200, listeningAt: 11_000 });
const goals = { refusals: 2, backS: 25, p99Ms: 100 };

function result(over: Partial<StormResult> = {}): StormResult {
  return {
    scenario: 'kill',
    clients: 4,
    acceptRate: 200,
    acceptBurst: 400,
    restart: restart('SIGKILL'),
    recovery: recoveryOf(4, [11_500, 12_000, 13_000, 20_000], restart('SIGKILL')),
    refusals: refusalsOf([0, 1, 1, 2]),
    otherFailures: 4,
    admission: admissionOf([11_500, 12_000, 13_000, 20_000]),
    counts: { ...zeroCounts(), delivered: 40 },
    affected: { lost: 0, duplicated: 0, resynced: 0 },
    caughtUp: true,
    probeRestart: { ECONNREFUSED: 3, ECONNRESET: 1 },
    writesRestart: { ECONNREFUSED: 5 },
    probeBefore: { n: 100, p50: 1, p99: 5, max: 9, opened: 1 },
    probeRecovery: { n: 180, p50: 2, p99: 40, max: 120, opened: 1 },
    ...over,
  };
}

describe('the storm counts', () => {
  it('quantile by nearest rank', () => {
    expect(quantile([], 0.5)).toBeNaN();
    expect(quantile([5, 1, 3], 0.5)).toBe(3);
    expect(
      quantile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        0.99,
      ),
    ).toBe(99);
    expect(quantile([7], 1)).toBe(7);
  });

  it('refusals per dropped client: mean, max, total', () => {
    expect(refusalsOf([0, 1, 1, 2])).toEqual({ clients: 4, total: 4, mean: 1, max: 2 });
    expect(refusalsOf([])).toEqual({ clients: 0, total: 0, mean: 0, max: 0 });
  });

  it('all back: from the signal and from the new instance answering, only when every one is', () => {
    const t = restart('SIGTERM');
    const r = recoveryOf(3, [11_200, 12_000, 14_000], t);
    expect(r).toMatchObject({ dropped: 3, back: 3, allBackAt: 14_000, fromSignalS: 4, fromListeningS: 3 });
    expect(r.p50FromListeningS).toBe(1);
    const partial = recoveryOf(4, [11_200, 12_000, 14_000], t);
    expect(partial.allBackAt).toBeUndefined();
    expect(partial.fromSignalS).toBeNaN();
  });

  it('admission: the busiest second, and the rate while the middle 80 % came back', () => {
    // 100 admitted evenly over 2 s, then 10 stragglers much later.
    const back = [...Array.from({ length: 100 }, (_, i) => 1000 + i * 20), ...Array.from({ length: 10 }, (_, i) => 60_000 + i)];
    const a = admissionOf(back);
    expect(a.peakPerS).toBe(50);
    expect(admissionOf([5, 5, 5])).toMatchObject({ peakPerS: 3 });
    expect(admissionOf([]).peakPerS).toBe(0);
    // The middle 80 % within a second: a rate of arrivals, not of admissions.
    expect(admissionOf([5, 5, 5]).meanPerS).toBeNaN();
    expect(admissionOf(Array.from({ length: 11 }, (_, i) => i * 100)).meanPerS).toBeNaN();
    // 11 over 10 s: the 10th and 90th percentiles are 1 s and 9 s apart by 8 s, 9 inside.
    expect(admissionOf(Array.from({ length: 11 }, (_, i) => i * 1000)).meanPerS).toBeCloseTo(9 / 8, 5);
    expect(Math.abs(a.meanPerS - 50)).toBeLessThan(1); // the stragglers do not drag it down
  });

  it('outcomes of the attempts that ended in a window; the unanswered among them', () => {
    const at = (doneAt: number, x: Partial<Attempt>): Attempt => ({ kind: 'update', sentAt: doneAt - 5, doneAt, ms: 5, ...x });
    const attempts = [at(9_000, { status: 200 }), at(10_100, { status: 503 }), at(10_500, { code: 'ECONNREFUSED' }), at(10_900, { code: 'ECONNRESET' }), at(11_000, { status: 200 })];
    const o = outcomesBetween(attempts, 10_000, 11_000);
    expect(o).toEqual({ 503: 1, ECONNREFUSED: 1, ECONNRESET: 1 });
    expect(unanswered(o)).toBe(2);
  });

  it('latency of the answered requests sent in a window', () => {
    const attempts: Attempt[] = [
      { kind: 'read', sentAt: 100, doneAt: 101, ms: 1, status: 200 },
      { kind: 'read', sentAt: 200, doneAt: 290, ms: 90, status: 200, opened: true },
      { kind: 'read', sentAt: 300, doneAt: 301, ms: 1, code: 'ECONNREFUSED' },
      { kind: 'read', sentAt: 900, doneAt: 901, ms: 1, status: 200 },
    ];
    expect(latencyBetween(attempts, 100, 400)).toEqual({ n: 2, p50: 1, p99: 90, max: 90, opened: 1 });
    expect(latencyBetween(attempts, 400, 800).n).toBe(0);
  });

  it('a failed write attempt is a refusal only when it cannot have been applied', () => {
    expect(failureOf({ status: 503 })).toBe('refused');
    expect(failureOf({ code: 'ECONNREFUSED' })).toBe('refused');
    expect(failureOf({ code: 'ECONNRESET' })).toBe('unknown');
    expect(failureOf({ code: 'timeout' })).toBe('unknown');
    expect(failureOf({ status: 500 })).toBe('unknown');
  });
});

describe('the storm verdict', () => {
  it('meets every target when refusals, time back, probe and streams are within the goals', () => {
    const ts = stormTargets(result(), goals);
    expect(ts.map((t) => t.met)).toEqual([true, true, true, true]);
    expect(passed(ts)).toBe(true);
  });

  it('misses on each number over its goal', () => {
    const missed = (r: StormResult) =>
      stormTargets(r, goals)
        .filter((t) => t.met === false)
        .map((t) => t.name);
    expect(missed(result({ refusals: refusalsOf([3, 3, 2, 1]) }))).toEqual(['refusals (503) per client']);
    expect(missed(result({ recovery: recoveryOf(4, [11_500, 12_000, 13_000, 35_001], restart('SIGKILL')) }))).toEqual(['all subscribers back']);
    expect(missed(result({ recovery: recoveryOf(4, [11_500, 12_000, 13_000], restart('SIGKILL')) }))).toEqual(['all subscribers back']);
    expect(missed(result({ probeRecovery: { n: 10, p50: 2, p99: 100, max: 300, opened: 0 } }))).toEqual(['probe p99 while they came back']);
    expect(missed(result({ counts: { ...zeroCounts(), lost: 1 } }))).toEqual(['events lost or duplicated in the storm']);
    expect(missed(result({ counts: { ...zeroCounts(), duplicates: 1 } }))).toEqual(['events lost or duplicated in the storm']);
    expect(missed(result({ caughtUp: false }))).toEqual(['events lost or duplicated in the storm']);
    expect(missed(result({ affected: { lost: 0, duplicated: 1, resynced: 0 } }))).toEqual(['events lost or duplicated in the storm']);
    expect(missed(result({ affected: { lost: 0, duplicated: 0, resynced: 3 } }))).toEqual([]);
  });

  it('a graceful restart must reset no request; a kill is not judged on resets', () => {
    const term = stormTargets(result({ scenario: 'sigterm', restart: restart('SIGTERM') }), goals);
    expect(term.at(-1)).toMatchObject({ name: 'requests reset by the graceful shutdown', met: false });
    const clean = stormTargets(result({ scenario: 'sigterm', restart: restart('SIGTERM'), probeRestart: { 503: 2, ECONNREFUSED: 4 } }), goals);
    expect(clean.at(-1)).toMatchObject({ met: true });
    expect(stormTargets(result(), goals).some((t) => t.name.includes('reset'))).toBe(false);
  });

  it('the capacity storm (limiter lifted) reports the limiter targets without a verdict, and judges losses', () => {
    const ts = stormTargets(result({ scenario: 'capacity', refusals: refusalsOf([9, 9]), probeRecovery: { n: 5, p50: 1, p99: 500, max: 900, opened: 0 } }), goals);
    expect(ts.map((t) => t.met)).toEqual([undefined, undefined, undefined, true]);
    // Not all back is a miss whatever the limiter.
    expect(stormTargets(result({ scenario: 'capacity', recovery: recoveryOf(4, [12_000], restart('SIGKILL')) }), goals)[1].met).toBe(false);
  });
});

describe('storm settings', () => {
  it('defaults: 10,000 clients, the service own limiter, every storm', () => {
    const d = serviceAcceptDefaults();
    const s = settingsOf([], {});
    expect(s).toMatchObject({
      sizes: [10_000],
      orders: 100,
      writes: 20,
      probe: 20,
      acceptRate: d.rate,
      acceptBurst: d.burst,
      acceptDefaults: true,
      scenarios: ['sigterm', 'kill', 'capacity'],
      clientsNice: 10,
      write: false,
    });
    expect(commandOf(s)).toBe('npm run storm -- --clients 10000 --orders 100 --writes 20 --probe 20 --clients-nice 10');
  });

  it('flags over the environment; sizes and scenarios as lists, kept in their run order', () => {
    // A rate that is not the service's default, whatever that default becomes.
    const rate = String(serviceAcceptDefaults().rate + 50);
    const s = settingsOf(['--sizes', '2500,5000', '--scenarios=capacity,kill', '--accept-rate', rate, '--write'], { STORM_ORDERS: '10', STORM_ACCEPT_RATE: '300' });
    expect(s).toMatchObject({ sizes: [2500, 5000], orders: 10, acceptRate: Number(rate), acceptDefaults: false, scenarios: ['kill', 'capacity'], write: true });
    expect(commandOf(s)).toContain('--sizes 2500,5000');
    expect(commandOf(s)).toContain(`--accept-rate ${rate}`);
    expect(commandOf(s)).toContain('--scenarios kill,capacity');
  });

  it('the clients at another priority: parsed, bounded, repeated by the command', () => {
    const s = settingsOf(['--clients-nice', '0'], {});
    expect(s.clientsNice).toBe(0);
    expect(commandOf(s)).toContain('--clients-nice 0');
    expect(() => settingsOf(['--clients-nice', '20'], {})).toThrow(/--clients-nice/);
  });

  it('refuses what it does not know', () => {
    expect(() => settingsOf(['--clients', '0'], {})).toThrow(/--clients/);
    expect(() => settingsOf(['--sizes', '10,x'], {})).toThrow(/--sizes/);
    expect(() => settingsOf(['--scenarios', 'reboot'], {})).toThrow(/reboot/);
    expect(() => settingsOf(['--nope'], {})).toThrow(/unknown argument/);
  });
});

describe('the storm part of BENCHMARKS.md', () => {
  const size = (clients: number, storms: StormResult[]): SizeResult => ({
    clients,
    label: 'embedded',
    openS: 3,
    storms,
    finalTargets: [{ name: 'events lost', value: '0', goal: '0', met: true }],
    settled: true,
    writeStatuses: { 200: 10 },
    probeStatuses: { 200: 20 },
    notes: [],
  });

  it('one row per storm with the figures of the table head', () => {
    const row = stormRow(result());
    expect(row).toMatch(/^\| 4 \| kill \| 200 \/ 400 \| 1\.0 \| 10\.0 \/ 9\.0 \| 1\.00 \/ 2 \/ 4 \| 4 \|/);
    expect(row.split('|').length).toBe(13);
  });

  it('is added once, inside Reliability after what is there, and rewritten in place', () => {
    const text = '# B\n\n## Reliability\n\nsoak\n\n### Reconnect storm: refusals per client (simulated)\n\nsim\n\n## Next\n\nmore\n';
    const s = settingsOf(['--sizes', '4,8', '--scenarios', 'kill,capacity'], {});
    const part = stormPart({ settings: s, env: 'today', results: [size(4, [result()]), size(8, [result({ clients: 8 }), result({ clients: 8, scenario: 'capacity' })])] });
    expect(part.startsWith(TITLE)).toBe(true);
    expect(part).toContain('Targets at 8 subscribers');
    expect(part).toContain('At 4: every target met.');
    expect(part).toContain('Accept capacity');
    const once = writeStorm(text, part);
    expect(once.indexOf('(simulated)')).toBeLessThan(once.indexOf(MARKERS.start));
    expect(once.indexOf(MARKERS.end)).toBeLessThan(once.indexOf('## Next'));
    expect(once).toContain('sim\n');
    const twice = writeStorm(once, 'again');
    expect(twice.split(MARKERS.start).length).toBe(2);
    expect(twice).toContain(`${MARKERS.start}\nagain\n${MARKERS.end}`);
    expect(twice).toContain('### Reconnect storm: refusals per client (simulated)');
  });

  it('BENCHMARKS.md has the Reliability section the part goes into', () => {
    const text = readFileSync(BENCHMARKS_FILE, 'utf8');
    expect(text).toMatch(/^## Reliability$/m);
    expect(() => writeStorm(text, 'x')).not.toThrow();
  });
});
