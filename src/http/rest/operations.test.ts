import { FAMILIES } from '../../../generated/openapi/handlers';
import type { Store } from '../../store';
import type { IncomingMessage } from 'node:http';
import fc from 'fast-check';
import { bindRoutes, readParameters, type OperationHandlers } from './operations';

const opts = { idempotency: { store: {} as Store, ttlMs: 1000 } };
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

describe('readParameters', () => {
  const bound = bindRoutes(handlersWithout(), opts);
  const listOrders = [...bound.values()].find((op) => op.spec.operationId === 'listOrdersV2' && op.spec.method === 'GET')!;
  const req = { headers: {} } as IncomingMessage;

  it('hands the handler the declared query parameters only, whatever else the client sends (generated)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.stringMatching(/^[a-z_]{1,8}$/), fc.stringMatching(/^[a-z0-9]{0,6}$/)), fc.stringMatching(/^[a-z0-9]{1,6}$/), (extra, page) => {
        const search = new URLSearchParams({ ...extra, page, limit: '5' }).toString();
        const read = readParameters(req, listOrders, {}, search);
        expect(read).toEqual({ params: {}, query: { page, limit: '5' }, headers: {} });
      }),
    );
  });
});
