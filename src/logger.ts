import pino, { type Logger } from 'pino';

/** Structured JSON logs on stdout (pino); each request's log line carries its id (http/finalize.ts). */
export function createLogger(level: string): Logger {
  return pino({ level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}

/**
 * A gate for a log line that can repeat per request (a store error during an outage: every
 * query fails alike): the first passes, then at most one per `everyMs`, which carries how many
 * it stood for (`suppressed`). Returns undefined when the line is to be left out. The metric
 * beside such a line counts every occurrence; the log says the outage began and goes on,
 * without a stack trace per failed request.
 */
export function throttle(everyMs: number, now: () => number = Date.now): () => { suppressed: number } | undefined {
  let last = -Infinity;
  let skipped = 0;
  return () => {
    const t = now();
    if (t - last < everyMs) {
      skipped++;
      return undefined;
    }
    last = t;
    const suppressed = skipped;
    skipped = 0;
    return { suppressed };
  };
}

/**
 * An outage of a dependency (PostgreSQL, Redis) in the log: each failure through `failed`
 * (a warning, throttled as above), and, when the dependency answers again after one, a single
 * `<what> reachable again` line with how long it was out and how many failures it caused. So an
 * operator reading the log sees where an outage ends, not only where its warnings stop.
 */
export function outageLog(logger: Pick<Logger, 'warn' | 'info'>, what: string, everyMs = 5000, now: () => number = Date.now): { failed(err: unknown, message: string): void; recovered(): void } {
  const gate = throttle(everyMs, now);
  let since: number | undefined;
  let failures = 0;
  return {
    failed(err, message) {
      failures++;
      since ??= now();
      const passed = gate();
      if (passed) logger.warn({ err, ...passed }, message);
    },
    recovered() {
      if (since === undefined) return;
      logger.info({ outageMs: now() - since, failures }, `${what} reachable again`);
      since = undefined;
      failures = 0;
    },
  };
}
