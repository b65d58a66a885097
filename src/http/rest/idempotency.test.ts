import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyResponse, RawRequest } from '../../../generated/openapi/bind';
import { SqliteStore } from '../../store/sqlite/SqliteStore';
import { idempotent, storedResponse } from './idempotency';
import type { OrderFields } from '../../store/ports/orders';
import type { AccountContext } from './operations';

describe('Idempotency-Key on an operation whose write cannot store the response itself', () => {
  let dir: string;
  let store: SqliteStore;
  let ctx: AccountContext;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orderline-idem-'));
    store = new SqliteStore(join(dir, 'db.sqlite'));
    await store.migrate();
    ctx = { method: 'POST', path: '/widgets', account: await store.ensureAccount('alice') };
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a retry with the first response, replayed, and runs the handler once (a new operation, not an order write)', async () => {
    let runs = 0;
    // A handler that writes somewhere of its own and does not take the completion (a widget in a Map, say).
    const handler = (): Promise<AnyResponse> => Promise.resolve({ status: 201, headers: { Location: `/widgets/w-${++runs}` }, contentType: 'application/json', body: { id: `w-${runs}` } });
    const op = idempotent(handler, { store, ttlMs: 86_400_000 }, () => false);
    const raw = (): RawRequest => ({ params: {}, query: {}, headers: { 'Idempotency-Key': 'k-1' }, contentType: 'application/json', body: { name: 'teapot' } });
    const first = await op(raw(), ctx);
    const again = await op(raw(), ctx);
    expect(runs).toBe(1);
    expect(first).toMatchObject({ status: 201, headers: { Location: '/widgets/w-1' } });
    expect(again).toMatchObject({ status: 201, headers: { Location: '/widgets/w-1', 'Idempotent-Replayed': 'true' }, body: '{"id":"w-1"}' });
  });

  it('leaves a failed request unstored, so its retry runs again', async () => {
    let runs = 0;
    const op = idempotent(
      () => Promise.resolve({ status: 409, contentType: 'application/problem+json', body: { runs: ++runs } }),
      { store, ttlMs: 86_400_000 },
      () => false,
    );
    const raw = (): RawRequest => ({ params: {}, query: {}, headers: { 'Idempotency-Key': 'k-2' } });
    await op(raw(), ctx);
    await op(raw(), ctx);
    expect(runs).toBe(2);
  });

  it('completes the key once: not again after a write that stored the response in its own transaction', async () => {
    const completions = jest.spyOn(store, 'completeIdempotencyKey');
    const fields: OrderFields = { status: 'pending', items: [], currency: 'EUR', discount: null, note: null };
    // As the order create does: the store completes the key, in the create's transaction, with the response `respond` builds.
    const op = idempotent(
      async (_raw, c) => {
        const claimed = c.idempotency!;
        const { order } = await store.createOrder(c.account.id, fields, {
          ...claimed,
          respond: (w) => (claimed.storedByWrite(), { status: 201, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ id: w.order.id }) }),
        });
        return { status: 201, headers: {}, contentType: 'application/json', body: JSON.stringify({ id: order.id }) };
      },
      { store, ttlMs: 86_400_000 },
      () => false,
    );
    const raw = (): RawRequest => ({ params: {}, query: {}, headers: { 'Idempotency-Key': 'k-3' }, contentType: 'application/json', body: { total_cents: 100 } });
    const first = await op(raw(), ctx);
    const again = await op(raw(), ctx);
    expect(completions).not.toHaveBeenCalled();
    expect(again).toMatchObject({ status: 201, headers: { 'Idempotent-Replayed': 'true' }, body: first.body });
  });
});

describe('storedResponse', () => {
  it('stores the Content-Type as it was sent: one among the headers (refining the contract type) wins, as the response writer lets it', () => {
    const refined: AnyResponse = { status: 201, headers: { 'Content-Type': 'application/json; charset=utf-8', Location: '/orders/1' }, contentType: 'application/json', body: { id: 1 } };
    expect(storedResponse(refined)).toEqual({ status: 201, headers: { 'Content-Type': 'application/json; charset=utf-8', Location: '/orders/1' }, body: '{"id":1}' });
    expect(storedResponse({ ...refined, headers: { Location: '/orders/1', Empty: '' } })).toEqual({ status: 201, headers: { Location: '/orders/1', 'Content-Type': 'application/json' }, body: '{"id":1}' });
  });
});
