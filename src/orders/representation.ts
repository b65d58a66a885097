import type { components } from '../../generated/openapi/types';
import type { OrderRecord } from '../store';
import { CANCELLABLE } from './transitions';

export type OrderV1 = components['schemas']['OrderV1'];
export type OrderV2 = components['schemas']['OrderV2'];

/**
 * Sum of quantity x unit price, less the discount percent, the total rounded half up (the
 * contract's words): gross x (100 - percent) / 100 to the nearest cent, a half cent up.
 * In integers throughout: the gross is split into whole hundreds and a remainder, so no
 * product passes 2^53 (a gross reaches 10^15: 100 lines of 100,000 x 10^8 cents).
 */
export function totalCents(order: Pick<OrderRecord, 'items' | 'discount'>): number {
  const gross = order.items.reduce((sum, i) => sum + i.quantity * i.unit_price_cents, 0);
  const kept = 100 - (order.discount?.percent ?? 0);
  const rest = gross % 100;
  return ((gross - rest) / 100) * kept + Math.floor((rest * kept + 50) / 100);
}

/** `base` is the collection path the client used (`/orders`, `/v1/orders`, `/v2/orders`): links stay in its version. */
function links(order: OrderRecord, self: string): OrderV2['_links'] {
  return CANCELLABLE.has(order.status) ? { self: { href: self }, cancel: { href: `${self}/cancel` } } : { self: { href: self } };
}

/** The stored items, copied member by member: a representation carries exactly the contract's members. */
const itemsOf = (order: OrderRecord) => order.items.map((i) => ({ sku: i.sku, quantity: i.quantity, unit_price_cents: i.unit_price_cents }));

/*
 * Each version is one object literal, its members in the contract's order: the list
 * builds one per order, and a literal (one hidden class, no spread copy) is the cheapest
 * object V8 makes and JSON.stringify walks.
 */

export function toV2(order: OrderRecord, base: string): OrderV2 {
  const self = `${base}/${order.id}`;
  const d = order.discount;
  return {
    id: order.id,
    status: order.status,
    items: itemsOf(order),
    total_cents: totalCents(order),
    currency: order.currency,
    note: order.note,
    created_at: order.createdAt,
    updated_at: order.updatedAt,
    _links: links(order, self),
    discount: d ? { code: d.code, percent: d.percent } : null,
  };
}

/** Version 1: `discount_code` in place of `discount`, both from the same stored discount. */
export function toV1(order: OrderRecord, base: string): OrderV1 {
  const self = `${base}/${order.id}`;
  return {
    id: order.id,
    status: order.status,
    items: itemsOf(order),
    total_cents: totalCents(order),
    currency: order.currency,
    note: order.note,
    created_at: order.createdAt,
    updated_at: order.updatedAt,
    _links: links(order, self),
    discount_code: order.discount?.code ?? null,
  };
}
