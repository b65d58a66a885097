import fc from 'fast-check';
import { StoreUnavailableError } from '../errors';
import { isUnavailable, unavailableOr } from './unavailable';

const sqliteError = (code: string) => Object.assign(new Error('x'), { code });

describe('which better-sqlite3 errors mean "the SQLite store cannot serve this now"', () => {
  it('are the lock timeouts and a closed connection', () => {
    for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_TIMEOUT', 'SQLITE_LOCKED', 'SQLITE_LOCKED_SHAREDCACHE']) expect(isUnavailable(sqliteError(code))).toBe(true);
    expect(isUnavailable(new TypeError('The database connection is not open'))).toBe(true);
  });

  it('are not a full disk, an I/O error, a constraint or anything else: those stay as they are', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom('SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_CORRUPT', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR'), fc.string()), (code) => {
        fc.pre(!code.startsWith('SQLITE_BUSY') && !code.startsWith('SQLITE_LOCKED'));
        const err = sqliteError(code);
        expect(unavailableOr(err)).toBe(err);
      }),
    );
    for (const other of [new RangeError('batch too large'), null, undefined, 'SQLITE_BUSY', { message: 'The database connection is not open ' }]) expect(unavailableOr(other)).toBe(other);
  });

  it('become one StoreUnavailableError of the engine "sqlite", with the driver error as its cause', () => {
    const err = sqliteError('SQLITE_BUSY');
    const mapped = unavailableOr(err);
    expect(mapped).toBeInstanceOf(StoreUnavailableError);
    expect(mapped).toMatchObject({ engine: 'sqlite', cause: err });
    expect(unavailableOr(mapped)).toBe(mapped);
  });
});
