import pino, { type Logger } from 'pino';

/** Structured JSON logs on stdout (pino); each request's log line carries its id (http/finalize.ts). */
export function createLogger(level: string): Logger {
  return pino({ level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}

/**
 * A process's exit: `exit(code)` ends it once the log lines written so far are out. pino's stdout
 * stream writes asynchronously, and an exit right after a line (the forced shutdown's error, the
 * drain's last lines) could cut it, or leave it to the exit hook's synchronous flush; so the exit
 * waits for the stream's flush, or `graceMs` at most (a stdout nobody reads must not hold it).
 * The first code decided wins: a drain that ends while the forced exit's line is flushing stays 1.
 */
export function exitAfterLogs(logger: Pick<Logger, 'flush'>, end: (code: number) => void = (c) => process.exit(c), graceMs = 1000): (code: number) => void {
  let decided: number | undefined;
  return (code) => {
    if (decided !== undefined) return;
    decided = code;
    process.exitCode = code;
    let ended = false;
    const once = () => {
      if (ended) return;
      ended = true;
      end(code);
    };
    setTimeout(once, graceMs).unref();
    logger.flush(once);
  };
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
 * What a driver's error is logged with: its name, message, code and stack, not every member it
 * carries (pg's errors hold the whole client: connection settings, prepared statements and the
 * server's cancel key, kilobytes of it per line).
 */
export function loggedError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const { code, errno, syscall, address, port } = err as Error & Record<string, unknown>;
  const plain: Record<string, unknown> = { type: err.name, message: err.message, stack: err.stack };
  for (const [k, v] of Object.entries({ code, errno, syscall, address, port })) if (v !== undefined && (typeof v === 'string' || typeof v === 'number')) plain[k] = v;
  return plain;
}

/**
 * An outage of a dependency (PostgreSQL, Redis) in the log: each failure through `failed`
 * (a warning, throttled as above), and, when the dependency answers again after one, a single
 * `<what> reachable again` line with how long it was out and how many failures it caused. So an
 * operator reading the log sees where an outage ends, not only where its warnings stop. The
 * line follows a warning: an outage whose failures the throttle kept out of the log (a second
 * connection of the same dependency coming back moments after the first) ends silently, so
 * each "reachable again" answers an "unreachable" the reader saw.
 */
export function outageLog(logger: Pick<Logger, 'warn' | 'info'>, what: string, everyMs = 5000, now: () => number = Date.now): { failed(err: unknown, message: string): void; recovered(): void } {
  // One gate per message: a dropped pooled connection ("database pool error") must not hold back
  // the first "database unreachable" of the same outage.
  const gates = new Map<string, () => { suppressed: number } | undefined>();
  let since: number | undefined;
  let failures = 0;
  let warned = false;
  return {
    failed(err, message) {
      failures++;
      since ??= now();
      let gate = gates.get(message);
      if (!gate) gates.set(message, (gate = throttle(everyMs, now)));
      const passed = gate();
      if (passed) {
        warned = true;
        logger.warn({ err: loggedError(err), ...passed }, message);
      }
    },
    recovered() {
      if (since === undefined) return;
      if (warned) logger.info({ outageMs: now() - since, failures }, `${what} reachable again`);
      since = undefined;
      failures = 0;
      warned = false;
    },
  };
}
