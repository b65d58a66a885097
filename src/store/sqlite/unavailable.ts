/**
 * Which errors of better-sqlite3 mean "the store cannot serve this now, retry later" rather
 * than "this statement failed": the one place that decides, so every statement of
 * SqliteStore turns the same failures into `StoreUnavailableError` (503 with Retry-After
 * over HTTP), as PostgresStore does for an unreachable server.
 *
 * - `SQLITE_BUSY*` and `SQLITE_LOCKED*`: another connection to the file (a cluster worker,
 *   `npm run token`, a backup) held the write lock for longer than `busy_timeout`. Nothing
 *   was written; the same request succeeds once the lock is free.
 * - A closed connection (better-sqlite3 throws a `TypeError` with no code): the store
 *   closed it after a read transaction it could neither commit nor roll back (readiness
 *   then says false), or the instance is shutting down.
 *
 * A full disk (`SQLITE_FULL`), an I/O error or a corrupt file stays what it is, a failure
 * of the server's that operators must see (500, logged): retrying does not help.
 */
import { StoreUnavailableError } from '../errors';

const CLOSED = 'The database connection is not open';

/** Whether `err` (from better-sqlite3) says the file is locked past the timeout, or the connection is closed. */
export function isUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = 'code' in err && typeof err.code === 'string' ? err.code : undefined;
  if (code !== undefined) return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
  return 'message' in err && err.message === CLOSED;
}

/** `err` as the store reports it: `StoreUnavailableError` for a locked file or a closed connection, else unchanged. */
export function unavailableOr(err: unknown): unknown {
  return err instanceof StoreUnavailableError || !isUnavailable(err) ? err : new StoreUnavailableError('sqlite', { cause: err });
}
