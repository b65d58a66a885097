import { CANCELLABLE, canTransition, TRANSITIONS } from './transitions';
import { decideWrite } from './decide';
import { toV2 } from './representation';
import type { OrderRecord } from '../store';

const order = (status: string): OrderRecord => ({
  id: 1,
  accountId: 1,
  revision: 1,
  status,
  items: [],
  currency: 'EUR',
  discount: null,
  note: null,
  createdAt: '2024-01-01T00:00:00.000Z',
  updatedAt: '2024-01-01T00:00:00.000Z',
});

describe('CANCELLABLE', () => {
  it('is the statuses with an edge to cancelled: pending and paid today', () => {
    expect([...CANCELLABLE].sort()).toEqual(['paid', 'pending']);
    for (const status of Object.keys(TRANSITIONS)) expect(CANCELLABLE.has(status)).toBe(status !== 'cancelled' && canTransition(status, 'cancelled'));
  });

  it('agrees with the cancel decision and the cancel link for every status', () => {
    for (const status of [...Object.keys(TRANSITIONS), 'unknown_status']) {
      const applies = decideWrite(order(status), { kind: 'cancel', version: 2 }).apply;
      expect([status, applies]).toEqual([status, CANCELLABLE.has(status)]);
      expect([status, toV2(order(status), '/orders')._links.cancel !== undefined]).toEqual([status, CANCELLABLE.has(status)]);
    }
  });
});
