/**
 * Preloaded into a server process by the idempotency crash test (`--require`): after a
 * create whose note is `crash-after-commit` has committed, and before any response is
 * written, the process kills itself with SIGKILL (kill -9: no cleanup, no flush). Test
 * code only; the service never loads it.
 */
import { SqliteStore } from '../../src/store';

const create = SqliteStore.prototype.createOrder; // eslint-disable-line @typescript-eslint/unbound-method -- called below with apply(this)
SqliteStore.prototype.createOrder = async function (this: SqliteStore, ...args: Parameters<typeof create>) {
  const created = await create.apply(this, args);
  if (args[1].note === 'crash-after-commit') process.kill(process.pid, 'SIGKILL');
  return created;
};
