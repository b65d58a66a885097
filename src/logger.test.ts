import fc from 'fast-check';
import { exitAfterLogs, outageLog, throttle } from './logger';

describe('throttle', () => {
  it('lets the first line through, then one per window, each counting the lines left out since the last (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 200 }), (everyMs, gaps) => {
        let t = 1_000_000;
        const gate = throttle(everyMs, () => t);
        let lastPass: number | undefined;
        let leftOut = 0;
        for (const gap of gaps) {
          t += gap;
          const r = gate();
          const due = lastPass === undefined || t - lastPass >= everyMs;
          expect(r !== undefined).toBe(due);
          if (r) {
            expect(r.suppressed).toBe(leftOut);
            lastPass = t;
            leftOut = 0;
          } else leftOut++;
        }
      }),
    );
  });
});

describe('outageLog', () => {
  it('says an outage is over once, after failures it warned of, with their count and its length; never without a warning (generated)', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ gap: fc.integer({ min: 0, max: 20_000 }), ok: fc.boolean() }), { maxLength: 100 }), (steps) => {
        let t = 0;
        const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
        const logger = {
          warn: (fields: object, msg: string) => void lines.push({ level: 'warn', fields: { ...fields }, msg }),
          info: (fields: object, msg: string) => void lines.push({ level: 'info', fields: { ...fields }, msg }),
        };
        const log = outageLog(logger as never, 'database', 5000, () => t);
        let failures = 0;
        let since: number | undefined;
        let warned = false;
        for (const { gap, ok } of steps) {
          t += gap;
          const before = lines.length;
          if (ok) {
            log.recovered();
            if (since === undefined || !warned) expect(lines.length).toBe(before);
            else expect(lines.slice(before)).toEqual([{ level: 'info', fields: { outageMs: t - since, failures }, msg: 'database reachable again' }]);
            failures = 0;
            since = undefined;
            warned = false;
          } else {
            log.failed(new Error('down'), 'database unreachable');
            failures++;
            since ??= t;
            expect(lines.slice(before).every((l) => l.level === 'warn')).toBe(true);
            warned ||= lines.length > before;
          }
        }
      }),
    );
  });
});

describe('outageLog lines', () => {
  it('ends an outage the throttle kept out of the log silently (a second connection back moments after the first)', () => {
    const lines: string[] = [];
    let t = 0;
    const log = outageLog({ warn: (_: object, msg: string) => void lines.push(msg), info: (_: object, msg: string) => void lines.push(msg) } as never, 'redis', 5000, () => t);
    log.failed(new Error('down'), 'redis unreachable');
    t = 100;
    log.recovered(); // the publishing connection
    t = 150;
    log.failed(new Error('down'), 'redis unreachable'); // the subscriber, still failing: throttled
    t = 200;
    log.recovered();
    expect(lines).toEqual(['redis unreachable', 'redis reachable again']);
  });

  it('gates each message on its own, and logs a driver error without the client it carries', () => {
    const lines: { fields: Record<string, unknown>; msg: string }[] = [];
    const push = (fields: object, msg: string) => void lines.push({ fields: { ...fields }, msg });
    const t = 0;
    const log = outageLog({ warn: push, info: push } as never, 'database', 5000, () => t);
    const poolError = Object.assign(new Error('Connection terminated unexpectedly'), { client: { secretKey: 123, processID: 9 }, code: 'ECONNRESET' });
    log.failed(poolError, 'database pool error');
    log.failed(new Error('unreachable'), 'database unreachable');
    expect(lines.map((l) => l.msg)).toEqual(['database pool error', 'database unreachable']);
    expect(lines[0].fields.err).toMatchObject({ type: 'Error', message: 'Connection terminated unexpectedly', code: 'ECONNRESET' });
    expect(JSON.stringify(lines[0].fields)).not.toContain('secretKey');
  });
});

describe('exitAfterLogs', () => {
  const saved = process.exitCode;
  afterEach(() => {
    process.exitCode = saved;
    jest.useRealTimers();
  });

  it('ends the process only once the log stream has flushed, with the first code decided', () => {
    jest.useFakeTimers();
    const flushes: (() => void)[] = [];
    const ended: number[] = [];
    const exit = exitAfterLogs({ flush: (cb?: (err?: Error) => void) => void flushes.push(() => cb?.()) }, (code) => void ended.push(code));
    exit(1);
    // A drain that ends while the forced exit's line is still being written does not turn 1 into 0.
    exit(0);
    expect(ended).toEqual([]);
    expect(process.exitCode).toBe(1);
    flushes.forEach((done) => done());
    expect(ended).toEqual([1]);
    jest.advanceTimersByTime(5_000);
    expect(ended).toEqual([1]);
  });

  it('ends it anyway after the grace period when the stream never flushes (a stdout nobody reads)', () => {
    jest.useFakeTimers();
    const ended: number[] = [];
    const exit = exitAfterLogs({ flush: () => undefined }, (code) => void ended.push(code), 1000);
    exit(2);
    jest.advanceTimersByTime(999);
    expect(ended).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(ended).toEqual([2]);
  });
});
