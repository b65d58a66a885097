import pino, { type Logger } from 'pino';

/** Structured JSON logs on stdout (pino); each request's log line carries its id (http/finalize.ts). */
export function createLogger(level: string): Logger {
  return pino({ level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}
