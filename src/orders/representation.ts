import type { components } from '../../generated/openapi/types';
import type { OrderRecord } from '../store';
import { CANCELLABLE } from './transitions';
import type { ApiVersion } from './versions';

export type OrderV1 = components['schemas']['OrderV1'];
export type OrderV2 = components['schemas']['OrderV2'];

/** Sum of quantity x unit price, less the discount percent, rounded half up (integer cents, no float drift beyond one division). */
export function totalCents(order: Pick<OrderRecord, 'items' | 'discount'>): number {
  const gross = order.items.reduce((sum, i) => sum + i.quantity * i.unit_price_cents, 0);
  const percent = order.discount?.percent ?? 0;
  return gross - Math.floor((gross * percent + 50) / 100);
}

/** `base` is the collection path the client used (`/orders`, `/v1/orders`, `/v2/orders`): links stay in its version. */
function common(order: OrderRecord, base: string) {
  const self = `${base}/${order.id}`;
  return {
    id: order.id,
    status: order.status,
    items: order.items.map((i) => ({ sku: i.sku, quantity: i.quantity, unit_price_cents: i.unit_price_cents })),
    total_cents: totalCents(order),
    currency: order.currency,
    note: order.note,
    created_at: order.createdAt,
    updated_at: order.updatedAt,
    _links: { self: { href: self }, ...(CANCELLABLE.has(order.status) ? { cancel: { href: `${self}/cancel` } } : {}) },
  };
}

export function toV2(order: OrderRecord, base: string): OrderV2 {
  const c = common(order, base);
  return { ...c, discount: order.discount ? { code: order.discount.code, percent: order.discount.percent } : null };
}

/** Version 1: `discount_code` in place of `discount`, both from the same stored discount (spec 9.4). */
export function toV1(order: OrderRecord, base: string): OrderV1 {
  const c = common(order, base);
  return { ...c, discount_code: order.discount?.code ?? null };
}

export const represent = (order: OrderRecord, version: ApiVersion, base: string): OrderV1 | OrderV2 => (version === 1 ? toV1(order, base) : toV2(order, base));
