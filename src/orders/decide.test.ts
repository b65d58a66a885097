import fc from 'fast-check';
import type { OrderRecord } from '../store';
import { createFields, decideWrite, writableView } from './decide';

const order = (over: Partial<OrderRecord> = {}): OrderRecord => ({
  id: 7,
  accountId: 1,
  revision: 3,
  status: 'pending',
  items: [{ sku: 'A', quantity: 2, unit_price_cents: 500 }],
  currency: 'EUR',
  discount: { code: 'TEN', percent: 10 },
  note: 'hi',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...over,
});

describe('the write decision', () => {
  it('applies a merge patch member by member and emits order.updated', () => {
    expect(decideWrite(order(), { kind: 'patch', version: 2, body: { note: 'bye' } })).toEqual({
      apply: true,
      fields: { status: 'pending', items: order().items, currency: 'EUR', discount: { code: 'TEN', percent: 10 }, note: 'bye' },
      eventType: 'order.updated',
    });
  });
  it('removes a member a patch sets to null', () => {
    const d = decideWrite(order(), { kind: 'patch', version: 2, body: { note: null, discount: null } });
    expect(d).toMatchObject({ apply: true, fields: { note: null, discount: null } });
  });
  it('keeps the percent when a v1 patch repeats the stored discount code, and starts a new code at 0 %', () => {
    expect(decideWrite(order(), { kind: 'patch', version: 1, body: { discount_code: 'TEN', note: 'x' } })).toMatchObject({
      fields: { discount: { code: 'TEN', percent: 10 } },
    });
    expect(decideWrite(order(), { kind: 'patch', version: 1, body: { discount_code: 'NEW' } })).toMatchObject({
      fields: { discount: { code: 'NEW', percent: 0 } },
    });
  });
  it('replaces every writable field with PUT, absent optional members becoming their defaults from the current order', () => {
    const body = { status: 'paid', items: [], currency: 'USD', discount: null, note: null };
    expect(decideWrite(order(), { kind: 'replace', version: 2, body })).toEqual({ apply: true, fields: body, eventType: 'order.updated' });
  });
  it('cancels a pending or paid order with order.cancelled', () => {
    for (const status of ['pending', 'paid']) {
      expect(decideWrite(order({ status }), { kind: 'cancel', version: 2 })).toMatchObject({ apply: true, eventType: 'order.cancelled', fields: { status: 'cancelled' } });
    }
  });
  it('refuses a move the transitions forbid with a conflict naming the allowed moves', () => {
    expect(decideWrite(order({ status: 'shipped' }), { kind: 'cancel', version: 2 })).toEqual({
      apply: false,
      reason: 'conflict',
      detail: 'Status shipped cannot become cancelled; allowed: delivered',
    });
    expect(decideWrite(order({ status: 'cancelled' }), { kind: 'cancel', version: 2 })).toMatchObject({ reason: 'conflict' });
    expect(decideWrite(order(), { kind: 'patch', version: 2, body: { status: 'delivered' } })).toMatchObject({ reason: 'conflict' });
  });
  it('calls a write that changes nothing unchanged, whatever the version', () => {
    fc.assert(
      fc.property(fc.constantFrom(1 as const, 2 as const), (version) => {
        const current = order();
        expect(decideWrite(current, { kind: 'patch', version, body: {} })).toEqual({ apply: false, reason: 'unchanged' });
        expect(decideWrite(current, { kind: 'patch', version, body: writableView(current, version) })).toEqual({ apply: false, reason: 'unchanged' });
      }),
    );
  });
  it('creates pending orders whatever the body says about status', () => {
    expect(createFields({}, 2)).toEqual({ status: 'pending', items: [], currency: 'EUR', discount: null, note: null });
    expect(createFields({ discount_code: 'X' }, 1)).toMatchObject({ discount: { code: 'X', percent: 0 }, status: 'pending' });
  });
});

describe('the event type', () => {
  it('is order.updated for a note edit on an order that is already cancelled', () => {
    expect(decideWrite(order({ status: 'cancelled' }), { kind: 'patch', version: 2, body: { note: 'late' } })).toMatchObject({
      apply: true,
      eventType: 'order.updated',
    });
  });
});
