/**
 * Which errors of pg mean "PostgreSQL cannot be reached now" (retry later) rather than
 * "this statement failed": the one place that decides, so every statement of
 * PostgresStore turns the same failures into `StoreUnavailableError`.
 */
import { StoreUnavailableError } from '../errors';

/** Socket errors of a connection that could not be made or was cut. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of an unavailable server (PostgreSQL, Appendix A): class 08 (connection
 * exception), 57P01 admin_shutdown (`pg_ctl stop -m fast`), 57P02 crash_shutdown,
 * 57P03 cannot_connect_now (starting up, or in recovery), 53300 too_many_connections,
 * 57014 query_canceled: the store's `statement_timeout` (nothing else here cancels a statement),
 * and 25006 read_only_sql_transaction: a write that reached a standby (the primary failed over
 * and the address still names the old one, now following the new). 55000
 * object_not_in_prerequisite_state is one only with its connection message (`ALTER DATABASE ...
 * ALLOW_CONNECTIONS false`, maintenance): the same code names statement errors too.
 */
const isUnavailableState = (code: string, message: string): boolean =>
  code.startsWith('08') ||
  code === '57P01' ||
  code === '57P02' ||
  code === '57P03' ||
  code === '53300' ||
  code === '57014' ||
  code === '25006' ||
  (code === '55000' && message.includes('is not currently accepting connections'));

/**
 * Messages pg and pg-pool throw without a code: the pool's `connectionTimeoutMillis`
 * elapsed, a statement's `query_timeout` elapsed, the server closed the connection, a
 * client already broken, a pool closed by shutdown.
 */
const UNAVAILABLE_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
];

/** Whether `err` (from pg or pg-pool) says the server is unreachable rather than that a statement failed. */
export function isUnavailable(err: unknown): boolean {
  // Read by shape, not `instanceof Error`: socket errors are made by Node's own realm, which a sandbox (jest) does not share.
  if (typeof err !== 'object' || err === null) return false;
  const code = 'code' in err && typeof err.code === 'string' ? err.code : undefined;
  const message = 'message' in err && typeof err.message === 'string' ? err.message : '';
  if (code !== undefined && (SOCKET_CODES.has(code) || (code.length === 5 && isUnavailableState(code, message)))) return true;
  return UNAVAILABLE_MESSAGES.some((m) => message.startsWith(m));
}

/** `err` as the store reports it: `StoreUnavailableError` for an unreachable server, else unchanged. */
export function unavailableOr(err: unknown): unknown {
  return err instanceof StoreUnavailableError || !isUnavailable(err) ? err : new StoreUnavailableError('postgres', { cause: err });
}
