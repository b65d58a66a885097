import fc from 'fast-check';
import type { OrderRecord } from '../store';
import type { components } from '../../generated/openapi/types';
import { createFields, decideWrite, writableView, type WriteIntent } from './decide';
import { applyMergePatch } from './mergePatch';
import type { ApiVersion } from './versions';

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
      fc.property(fc.constantFrom<ApiVersion>(1, 2), (version) => {
        const current = order();
        expect(decideWrite(current, { kind: 'patch', version, body: {} })).toEqual({ apply: false, reason: 'unchanged' });
        const same: WriteIntent[] =
          version === 1
            ? [
                { kind: 'patch', version, body: writableView(current, version) },
                { kind: 'replace', version, body: writableView(current, version) },
              ]
            : [
                { kind: 'patch', version, body: writableView(current, version) },
                { kind: 'replace', version, body: writableView(current, version) },
              ];
        for (const intent of same) expect(decideWrite(current, intent)).toEqual({ apply: false, reason: 'unchanged' });
      }),
    );
  });
  it('creates pending orders whatever the body says about status', () => {
    expect(createFields({ kind: 'create', version: 2, body: {} })).toEqual({ status: 'pending', items: [], currency: 'EUR', discount: null, note: null });
    expect(createFields({ kind: 'create', version: 1, body: { discount_code: 'X' } })).toMatchObject({ discount: { code: 'X', percent: 0 }, status: 'pending' });
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

describe('a patch is RFC 7396 on the writable view (generated)', () => {
  type S = components['schemas'];
  const item = fc.record({ sku: fc.constantFrom('A', 'B'), quantity: fc.integer({ min: 1, max: 3 }), unit_price_cents: fc.constantFrom(0, 500) });
  const common = {
    status: fc.constantFrom('pending', 'paid', 'shipped', 'cancelled'),
    items: fc.array(item, { maxLength: 2 }),
    currency: fc.constantFrom('EUR', 'USD'),
    note: fc.option(fc.constantFrom('hi', 'bye')),
  };
  const patchV1: fc.Arbitrary<S['OrderPatchV1']> = fc.record({ ...common, discount_code: fc.option(fc.constantFrom('TEN', 'NEW')) }, { requiredKeys: [] });
  const patchV2: fc.Arbitrary<S['OrderPatchV2']> = fc.record(
    { ...common, discount: fc.option(fc.record({ code: fc.constantFrom('TEN', 'NEW'), percent: fc.constantFrom(0, 10, 50) }, { requiredKeys: [] })) },
    { requiredKeys: [] },
  );
  const current = fc.record({
    status: fc.constantFrom('pending', 'paid'),
    discount: fc.option(fc.record({ code: fc.constantFrom('TEN', 'OLD'), percent: fc.constantFrom(10, 20) })),
    note: fc.option(fc.constantFrom('hi', 'x')),
  });

  /** What the patched order must look like to a client of that version: the RFC's merge of its view, removed members null (`Object` gives the reference's unknown a shape to read). */
  const expected = (view: object, patch: object, discountMember: string) => ({ note: null, [discountMember]: null, ...Object(applyMergePatch(view, patch)) });

  it('version 2: members replace, null removes, a discount object merges into the current one', () => {
    fc.assert(
      fc.property(current, patchV2, (over, body) => {
        const o = order(over);
        const d = decideWrite(o, { kind: 'patch', version: 2, body });
        const merged = expected(writableView(o, 2), body, 'discount');
        const incomplete = merged.discount !== null && (merged.discount.code === undefined || merged.discount.percent === undefined);
        if (d.apply) expect(writableView(d.fields, 2)).toEqual(merged);
        else if (d.reason === 'unchanged') expect(writableView(o, 2)).toEqual(merged);
        else expect(incomplete || merged.status !== o.status).toBe(true); // a conflict: a forbidden move or a discount without both members
        if (incomplete) expect(d).toMatchObject({ apply: false, reason: 'conflict' });
      }),
    );
  });

  it('version 1: the same, with discount_code mapped onto the stored discount', () => {
    fc.assert(
      fc.property(current, patchV1, (over, body) => {
        const o = order(over);
        const d = decideWrite(o, { kind: 'patch', version: 1, body });
        const merged = expected(writableView(o, 1), body, 'discount_code');
        if (d.apply) expect(writableView(d.fields, 1)).toEqual(merged);
        else if (d.reason === 'unchanged') expect(writableView(o, 1)).toEqual(merged);
        else expect(merged.status).not.toBe(o.status);
      }),
    );
  });
});

describe('a version-2 discount patch on an order without a discount', () => {
  it('needs both members (409 with a reason), and merges one member into an existing discount', () => {
    expect(decideWrite(order({ discount: null }), { kind: 'patch', version: 2, body: { discount: { code: 'X' } } })).toMatchObject({ apply: false, reason: 'conflict' });
    expect(decideWrite(order({ discount: null }), { kind: 'patch', version: 2, body: { discount: { code: 'X', percent: 5 } } })).toMatchObject({
      apply: true,
      fields: { discount: { code: 'X', percent: 5 } },
    });
    expect(decideWrite(order(), { kind: 'patch', version: 2, body: { discount: { percent: 50 } } })).toMatchObject({ apply: true, fields: { discount: { code: 'TEN', percent: 50 } } });
  });
});
