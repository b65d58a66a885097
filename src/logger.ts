import pino, { type Logger } from 'pino';

/** Structured JSON logs on stdout (pino); request ids are bound per request in http/requestLog. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}
