import fc from 'fast-check';
import { StoreUnavailableError } from '../errors';
import { isUnavailable, unavailableOr } from './unavailable';

const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('which pg errors mean "PostgreSQL is unreachable"', () => {
  it.each([
    ['connection refused', pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['connection reset', pgError('ECONNRESET')],
    ['admin shutdown (pg_ctl stop -m fast)', pgError('57P01', 'terminating connection due to administrator command')],
    ['starting up', pgError('57P03', 'the database system is starting up')],
    ['connection exception class 08', pgError('08006')],
    ['too many connections', pgError('53300')],
    ['connections not allowed (ALTER DATABASE ... ALLOW_CONNECTIONS false)', pgError('55000', 'database "t3" is not currently accepting connections')],
    ['a write that reached a standby after a failover', pgError('25006', 'cannot execute INSERT in a read-only transaction')],
    ['the pool timed out', new Error('timeout exceeded when trying to connect')],
    ['the server closed the connection', new Error('Connection terminated unexpectedly')],
    ['the pool was ended (shutdown)', new Error('Cannot use a pool after calling end on the pool')],
  ])('%s is', (_name, err) => {
    expect(isUnavailable(err)).toBe(true);
    const out = unavailableOr(err);
    expect(out).toBeInstanceOf(StoreUnavailableError);
    expect(out).toMatchObject({ engine: 'postgres', cause: err });
  });

  it.each([
    ['a unique violation', pgError('23505', 'duplicate key value violates unique constraint')],
    ['a syntax error', pgError('42601')],
    ['a serialization failure', pgError('40001')],
    ['another object_not_in_prerequisite_state', pgError('55000', 'lastval is not yet defined in this session')],
    ['a plain Error', new Error('boom')],
  ])('%s is not, and is returned as it is', (_name, err) => {
    expect(isUnavailable(err)).toBe(false);
    expect(unavailableOr(err)).toBe(err);
  });

  it('never throws and keeps any other value as it is (generated)', () => {
    fc.assert(
      fc.property(fc.anything(), (v) => {
        const out = unavailableOr(v);
        expect(Object.is(out, v) || out instanceof StoreUnavailableError).toBe(true); // Object.is: NaN is kept as it is too
      }),
    );
  });

  it('does not wrap twice', () => {
    const once = unavailableOr(pgError('ECONNRESET'));
    expect(unavailableOr(once)).toBe(once);
  });
});
