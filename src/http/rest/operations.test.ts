import { FAMILIES } from '../../../generated/openapi/handlers';
import type { Store } from '../../store';
import { bindRoutes, type OperationHandlers } from './operations';

const opts = { bodyLimit: 1024, idempotency: { store: {} as Store, ttlMs: 1000 } };
/** Handlers for every family but `without`: what a build that failed typecheck may still run with. */
const handlersWithout = (...without: string[]) =>
  // The cast stands for the compiler's check that this test is about going around.
  Object.fromEntries(FAMILIES.filter((name) => !without.includes(name)).map((name) => [name, () => Promise.resolve({ status: 204 })])) as unknown as OperationHandlers;

describe('bindRoutes', () => {
  it('binds every operation of the route table when every handler is there', () => {
    expect(bindRoutes(handlersWithout(), opts).size).toBeGreaterThan(FAMILIES.length);
  });

  it('refuses to start with a handler missing, naming every one missing (the compiler names four at most)', () => {
    const missing = FAMILIES.slice(0, 6);
    expect(() => bindRoutes(handlersWithout(...missing), opts)).toThrow(new RegExp(`no handler for 6 contract operation\\(s\\): ${missing.join(', ')}`));
  });
});
