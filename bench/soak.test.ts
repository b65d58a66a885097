import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { BENCHMARKS_FILE } from './lib/report';
import { parseBlock } from './soak/client';
import { createOutcome, patchOutcome } from './soak/load';
import { markers, SCENARIOS, scenarioOf, SECTION, writeReliability } from './soak/report';
import { SeqAccount } from './soak/seqs';
import { ringFillSeconds, settingsOf } from './soak/settings';
import { outageTargets, type OutageRecord } from './soak/outage';
import type { Attempt } from './soak/load';
import { slope, slopePer10Min, type Sample } from './soak/trend';
import { count5xx, memoryTargets, passed, streamTargets } from './soak/verdict';

const MB = 1024 * 1024;

describe('SeqAccount: one subscriber judged by the wire rule', () => {
  it('applies seq = last + 1 and ends clean at the head', () => {
    const a = new SeqAccount(3);
    expect([4, 5, 6].map((s) => a.event(s))).toEqual(['apply', 'apply', 'apply']);
    expect(a.since()).toBe(6);
    expect(a.finish(6)).toMatchObject({ delivered: 3, lost: 0, duplicates: 0, gaps: 0, violations: 0 });
  });

  it('counts a replayed seq as a duplicate, not as a delivery', () => {
    const a = new SeqAccount(0);
    a.event(1);
    a.event(2);
    expect(a.event(2)).toBe('drop');
    expect(a.event(1)).toBe('drop');
    expect(a.finish(2)).toMatchObject({ delivered: 2, duplicates: 2, lost: 0 });
  });

  it('counts the seqs a gap skipped as lost until they arrive, then as out of order', () => {
    const a = new SeqAccount(0);
    a.event(1);
    expect(a.event(5)).toBe('gap');
    expect(a.finish(5)).toMatchObject({ gaps: 1, lost: 3 });
    a.event(3);
    expect(a.finish(5)).toMatchObject({ lost: 2, outOfOrder: 1, duplicates: 0 });
    a.event(3);
    expect(a.finish(5)).toMatchObject({ lost: 2, outOfOrder: 1, duplicates: 1 });
  });

  it('counts a subscriber short of the head as lost by the difference', () => {
    const a = new SeqAccount(10);
    a.event(11);
    expect(a.finish(14)).toMatchObject({ lost: 3 });
  });

  it('counts resyncs apart from losses, with the seqs they skipped', () => {
    const a = new SeqAccount(2);
    expect(a.resync(40)).toBe('resync');
    a.event(41);
    expect(a.finish(41)).toMatchObject({ resyncs: 1, resyncSkipped: 38, lost: 0, delivered: 1, violations: 0 });
  });

  it('takes a subscribed not at the resume point, a resync going back and a last seq past the head for breaches', () => {
    const a = new SeqAccount(5);
    a.subscribed(5, 5);
    expect(a.finish(5).violations).toBe(0);
    a.subscribed(7, 5);
    a.resync(3);
    expect(a.finish(3).violations).toBe(2);
    a.event(4);
    expect(a.finish(3).violations).toBe(3);
    expect(a.notes).toEqual(['subscribed at 7, resumed from 5', 'resync back from 5 to 3']);
  });

  it('counts exactly over any delivery order with repeats and omissions (generated)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }).chain((head) => fc.tuple(fc.constant(head), fc.array(fc.integer({ min: 1, max: head }), { maxLength: 120 }))),
        ([head, seqs]) => {
          const a = new SeqAccount(0);
          for (const s of seqs) a.event(s);
          const c = a.finish(head);
          const distinct = new Set(seqs).size;
          expect(c.lost).toBe(head - distinct);
          expect(c.delivered + c.outOfOrder).toBe(distinct);
          expect(c.duplicates).toBe(seqs.length - distinct);
          expect(c.violations).toBe(0);
        },
      ),
    );
  });
});

describe('memory trend', () => {
  const samples = (f: (t: number) => number, heap?: (t: number) => number, to = 1800, fds = () => 30): Sample[] =>
    Array.from({ length: to / 10 + 1 }, (_, i) => ({ t: i * 10, rss: f(i * 10), heap: heap?.(i * 10), fds: fds() }));

  it('fits the least-squares slope', () => {
    expect(slope([{ t: 0, v: 1 }])).toBeNaN();
    expect(
      slope([
        { t: 0, v: 1 },
        { t: 10, v: 21 },
        { t: 20, v: 41 },
      ]),
    ).toBeCloseTo(2);
    expect(
      slope([
        { t: 0, v: 0 },
        { t: 10, v: 10 },
        { t: 20, v: 0 },
      ]),
    ).toBeCloseTo(0);
    expect(
      slopePer10Min(
        samples((t) => 100 * MB + (t >= 300 ? t * 1000 : 0)),
        'rss',
        300,
      ),
    ).toBeCloseTo(600_000);
  });

  const window = { from: 300, to: 1800, afterFrom: 1800, afterTo: 1800, idleFds: 30, slopeLimitMb: 1, returnPct: 10 };

  it('meets the targets on flat memory and misses them on growth after warm-up', () => {
    const flat = memoryTargets(
      'A',
      samples(
        () => 200 * MB,
        () => 50 * MB,
      ),
      window,
    );
    expect(flat.map((t) => t.met)).toEqual([true, true, true, true, true]);
    // 2 MB per 10 minutes of growth after warm-up: the RSS trend is missed.
    const growing = memoryTargets(
      'A',
      samples((t) => 200 * MB + ((t * 2) / 600) * MB),
      window,
    );
    expect(growing[0]).toMatchObject({ name: 'A: RSS trend after warm-up', met: false });
    expect(growing[0].value).toMatch(/^\+2\.00 MB per 10 min/);
    // Growth only before warm-up (the rings filling) is not a trend.
    expect(
      memoryTargets(
        'A',
        samples((t) => 200 * MB + Math.min(t, 300) * MB),
        window,
      )[0].met,
    ).toBe(true);
  });

  it('misses the return when the level after the load is more than returnPct above the warm level', () => {
    const s = [
      ...samples(
        () => 200 * MB,
        () => 50 * MB,
        1790,
      ),
      { t: 1900, rss: 230 * MB, heap: 54 * MB, fds: 31 },
    ];
    const t = memoryTargets('A', s, { ...window, afterFrom: 1850, afterTo: 1900 });
    expect(t[1]).toMatchObject({ met: false });
    expect(t[1].value).toMatch(/\+15\.0 %/);
    expect(t[3]).toMatchObject({ met: true });
    expect(t[4]).toMatchObject({ met: false, value: '31 (idle 30)' });
  });

  it('reports heap as not measured when the metrics never answered, which does not fail the run', () => {
    const t = memoryTargets(
      'A',
      samples(() => 200 * MB),
      window,
    );
    expect(t[2]).toMatchObject({ met: undefined, value: 'not measured' });
    expect(passed(t)).toBe(true);
  });
});

describe('verdict', () => {
  const zero = { delivered: 10, duplicates: 0, outOfOrder: 0, gaps: 0, lost: 0, resyncs: 2, resyncSkipped: 9, violations: 0, subscribers: 3 };

  it('passes a clean stream outcome and fails on each of lost, duplicated, behind and breaches', () => {
    expect(passed(streamTargets({ counts: zero, behind: 0, unknown: 0 }))).toBe(true);
    expect(passed(streamTargets({ counts: { ...zero, lost: 1 }, behind: 0, unknown: 0 }))).toBe(false);
    expect(passed(streamTargets({ counts: { ...zero, duplicates: 1 }, behind: 0, unknown: 0 }))).toBe(false);
    expect(passed(streamTargets({ counts: zero, behind: 1, unknown: 0 }))).toBe(false);
    expect(passed(streamTargets({ counts: zero, behind: 0, unknown: 1 }))).toBe(false);
  });

  it('counts the 5xx of every kind', () => {
    expect(
      count5xx([
        { 200: 5, 503: 1 },
        { 304: 2, 500: 2, 499: 7 },
      ]),
    ).toBe(3);
  });
});

describe('writes whose answer was lost', () => {
  it('tells from a resent PATCH (same If-Match and note) whether the lost attempt had applied it', () => {
    expect(patchOutcome(200, false, undefined, 'n1')).toBe('acked');
    expect(patchOutcome(200, true, undefined, 'n1')).toBe('applied-on-retry');
    expect(patchOutcome(412, true, 'n1', 'n1')).toBe('applied-before');
    // A 412 the lost attempt does not explain: another writer, or a write that vanished.
    expect(patchOutcome(412, true, 'n0', 'n1')).toBe('conflict');
    expect(patchOutcome(412, false, 'n1', 'n1')).toBe('conflict');
    expect(patchOutcome(503, false, undefined, 'n1')).toBe('retry');
    expect(patchOutcome(422, false, undefined, 'n1')).toBe('refused');
  });

  it('tells from a resent create (same Idempotency-Key) whether the lost attempt had created it', () => {
    expect(createOutcome(false, undefined)).toBe('acked');
    expect(createOutcome(true, 'true')).toBe('applied-before');
    expect(createOutcome(true, undefined)).toBe('applied-on-retry');
  });
});

describe('settings', () => {
  it('takes flags over environment over defaults', () => {
    const s = settingsOf(['--ws', '200', '--sse=50', '--duration', '60', '--warmup', '20'], { SOAK_SSE: '9', SOAK_CHURN: '3' });
    expect(s).toMatchObject({ mode: 'embedded', ws: 200, sse: 50, churn: 3, duration: 60, reads: 200, failover: false, metricsUrl: '{metrics}/metrics' });
  });

  it('puts the failover half-way unless told, and only with two instances', () => {
    expect(settingsOf(['--mode', 'pg-redis', '--failover', '--duration', '1000'], {}).failoverAt).toBe(500);
    expect(() => settingsOf(['--failover'], {})).toThrow(/pg-redis/);
    expect(() => settingsOf(['--mode', 'pg-redis', '--failover', '--failover-at', '900'], { SOAK_DURATION: '600' })).toThrow(/inside --duration/);
    expect(settingsOf(['--mode', 'pg-redis', '--outage', 'redis', '--duration', '150', '--warmup', '30'], {})).toMatchObject({ outage: 'redis', outageAt: 50, outageFor: 10 });
    expect(() => settingsOf(['--outage', 'postgres'], {})).toThrow(/pg-redis/);
    expect(() => settingsOf(['--mode', 'pg-redis', '--outage', 'mysql'], {})).toThrow(/none, postgres or redis/);
    expect(() => settingsOf(['--mode', 'pg-redis', '--outage', 'redis', '--outage-at', '115', '--duration', '150', '--warmup', '30'], {})).toThrow(/inside --duration/);
  });

  it('estimates when the replay rings are full, from the updates per order and the ring size', () => {
    const s = settingsOf([], {});
    // 300 events per ring at 38 updates/s over 100 orders: inside the default warm-up.
    expect(ringFillSeconds(s, {})).toBeCloseTo(789.5, 0);
    expect(ringFillSeconds(s, {})).toBeLessThan(s.warmup);
    expect(ringFillSeconds(s, { REPLAY_WINDOW_S: '600' })).toBeCloseTo(1578.9, 0);
    expect(ringFillSeconds({ ...s, writes: 0 }, {})).toBe(Infinity);
  });

  it('refuses unknown flags and bad values', () => {
    expect(() => settingsOf(['--wss', '1'], {})).toThrow(/unknown argument/);
    expect(() => settingsOf(['--ws'], {})).toThrow(/needs a value/);
    expect(() => settingsOf(['--churn', '101'], {})).toThrow(/churn/);
    expect(() => settingsOf([], { SOAK_WS: 'x' })).toThrow(/--ws/);
    expect(() => settingsOf(['--mode', 'cluster'], {})).toThrow(/embedded or pg-redis/);
    expect(() => settingsOf(['--duration', '60'], {})).toThrow(/--warmup/);
  });
});

describe('SSE blocks', () => {
  it('reads id, event and data; ignores comments and retry', () => {
    expect(parseBlock('id: 7\nevent: order.updated\ndata: {"seq":7}')).toEqual({ id: '7', event: 'order.updated', data: '{"seq":7}' });
    expect(parseBlock(': ping')).toEqual({});
    expect(parseBlock('retry: 1000')).toEqual({});
  });
});

describe('the Reliability section of BENCHMARKS.md', () => {
  it('is added when missing, and a run rewrites only its own part', () => {
    const doc = '# Benchmarks\n\n## Other\n\ntext\n';
    const once = writeReliability(doc, 'embedded', '### E\n\nfigures');
    expect(once.startsWith(doc.trimEnd())).toBe(true);
    expect(once).toContain(`${markers('embedded').start}\n### E\n\nfigures\n${markers('embedded').end}`);
    const twice = writeReliability(once, 'pg-redis-failover', 'F');
    expect(twice).toContain('### E\n\nfigures');
    expect(twice).toContain(`${markers('pg-redis-failover').start}\nF\n${markers('pg-redis-failover').end}`);
    expect(twice.split('## Reliability').length).toBe(2);
  });

  it('names the scenario from the settings', () => {
    expect(scenarioOf({ mode: 'embedded', failover: false, outage: 'none' })).toBe('embedded');
    expect(scenarioOf({ mode: 'pg-redis', failover: false, outage: 'none' })).toBe('pg-redis');
    expect(scenarioOf({ mode: 'pg-redis', failover: true, outage: 'none' })).toBe('pg-redis-failover');
    expect(scenarioOf({ mode: 'pg-redis', failover: false, outage: 'postgres' })).toBe('pg-redis-outage-postgres');
    expect(scenarioOf({ mode: 'pg-redis', failover: false, outage: 'redis' })).toBe('pg-redis-outage-redis');
  });

  it('has every scenario marked in BENCHMARKS.md', () => {
    const md = readFileSync(BENCHMARKS_FILE, 'utf8');
    expect(md).toContain('## Reliability');
    for (const n of SCENARIOS) {
      expect(md).toContain(markers(n).start);
      expect(md).toContain(markers(n).end);
    }
    expect(SECTION).toContain('## Reliability');
  });
});

describe('outage targets', () => {
  const attempt = (status: number | undefined, extra: Partial<Attempt> = {}): Attempt => ({ kind: 'read', sentAt: 0, doneAt: 0, ms: 1, ...(status === undefined ? { code: 'timeout' } : { status }), ...extra });
  const base = (over: Partial<OutageRecord> = {}): OutageRecord => ({
    engine: 'postgres',
    stoppedAt: 10,
    startedAt: 20,
    readyAt: 21,
    attempts: [attempt(200), attempt(503, { explained: true, retryAfter: true }), attempt(503, { kind: 'graphql', explained: true, retryAfter: true })],
    readiness: [0, 1].flatMap((instance) => [
      { t: 13, instance, status: 503, engineDown: true },
      { t: 21, instance, status: 200, engineDown: false },
    ]),
    instances: 2,
    samePids: [true, true],
    connectedBefore: 2500,
    backAt: 23,
    ...over,
  });
  const met = (r: OutageRecord) => outageTargets(r).map((t) => t.met);

  it('meets all four when every 5xx is an explained 503 with Retry-After, readiness named the engine, and both came back', () => {
    expect(met(base())).toEqual([true, true, true, true]);
  });

  it.each([
    ['a 500', [attempt(500, { explained: true, retryAfter: true })]],
    ['a 503 without Retry-After', [attempt(503, { explained: true, retryAfter: false })]],
    ['an unexplained 503', [attempt(503, { explained: false, retryAfter: true })]],
    ['a request left unanswered', [attempt(undefined)]],
    ['no request at all', []],
  ])('misses the answers target on %s', (_, attempts) => {
    expect(met(base({ attempts }))).toEqual([false, true, true, true]);
  });

  it('misses readiness when an instance said ready, or did not name the engine, while it was away', () => {
    expect(met(base({ readiness: [...base().readiness, { t: 15, instance: 1, status: 200, engineDown: false }] }))[1]).toBe(false);
    expect(met(base({ readiness: [{ t: 15, instance: 0, status: 503, engineDown: false }] }))[1]).toBe(false);
  });

  it('misses the recovery when not ready in time or a process was restarted', () => {
    expect(met(base({ readyAt: undefined }))[2]).toBe(false);
    expect(met(base({ samePids: [true, false] }))[2]).toBe(false);
  });

  it('misses the streams target when the subscribers were not back in time', () => {
    expect(met(base({ backAt: undefined }))[3]).toBe(false);
  });
});
