import { validateClientMessage, validateErrorMessage, validateOrderEventMessage } from '../generated/asyncapi/validators';

describe('generated AsyncAPI validators', () => {
  it('accept subscribe with and without since, and unsubscribe', () => {
    expect(validateClientMessage({ type: 'subscribe', channel: 'order:1' })).toBe(true);
    expect(validateClientMessage({ type: 'subscribe', channel: 'order:42', since: 7 })).toBe(true);
    expect(validateClientMessage({ type: 'unsubscribe', channel: 'order:42' })).toBe(true);
  });
  it.each([
    [{ type: 'subscribe', channel: 'order:abc' }],
    [{ type: 'subscribe', channel: 'user:1' }],
    [{ type: 'subscribe', channel: 'order:0' }],
    [{ type: 'subscribe', channel: 'order:1', since: -1 }],
    [{ type: 'subscribe', channel: 'order:1', extra: true }],
    [{ type: 'publish', channel: 'order:1' }],
    [{ type: 'unsubscribe', channel: 'order:1', since: 1 }],
    ['subscribe'],
    [null],
  ])('reject %j', (msg) => {
    expect(validateClientMessage(msg)).toBe(false);
  });
  it('require channel and seq on errors, nullable', () => {
    expect(validateErrorMessage({ type: 'error', channel: null, seq: null, code: 'bad_message', message: 'x' })).toBe(true);
    expect(validateErrorMessage({ type: 'error', code: 'bad_message', message: 'x' })).toBe(false);
  });
  it('take an error code added later (an open set: x-extensible-enum), and a string only', () => {
    expect(validateErrorMessage({ type: 'error', channel: 'order:1', seq: null, code: 'unavailable', message: 'x' })).toBe(true);
    expect(validateErrorMessage({ type: 'error', channel: null, seq: null, code: 'over_quota', message: 'x' })).toBe(true);
    expect(validateErrorMessage({ type: 'error', channel: null, seq: null, code: 3, message: 'x' })).toBe(false);
  });
  it("check the order payload against the REST contract's OrderV2", () => {
    const order = {
      id: 1,
      status: 'paid',
      items: [],
      total_cents: 0,
      currency: 'EUR',
      discount: null,
      note: null,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      _links: { self: { href: '/orders/1' } },
    };
    expect(validateOrderEventMessage({ type: 'order.updated', channel: 'order:1', seq: 2, status: 'paid', order })).toBe(true);
    expect(validateOrderEventMessage({ type: 'order.updated', channel: 'order:1', seq: 2, status: 'paid', order: { ...order, discount_code: 'X' } })).toBe(false);
  });
});
