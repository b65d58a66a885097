/**
 * SqliteStore's row types and mappers: items and event payloads are JSON text in
 * SQLite; only the port's five writable fields become columns.
 */
import type { OrderEvent, OrderFields, OrderItem, OrderRecord } from '../store';
import { toOrder as sharedToOrder, type OrderRow as SharedOrderRow } from '../rows';

export type OrderRow = SharedOrderRow<string>;
/** The columns a create or a write sets, as bound to the statements. */
export type OrderColumns = Pick<OrderRow, 'status' | 'items' | 'currency' | 'discount_code' | 'discount_percent' | 'note'>;
export interface EventRow {
  order_id: number;
  seq: number;
  account_id: number;
  type: OrderEvent['type'];
  payload: string;
  created_at: string;
}
/** Parameters of the batch (one query per call) statements. */
export interface BatchParams {
  ids: string;
  first: number;
  cap: number;
}

export const toOrder = (r: OrderRow): OrderRecord => sharedToOrder(r, (items) => JSON.parse(items) as OrderItem[]);
export const toEvent = (r: EventRow): OrderEvent => ({
  orderId: r.order_id,
  accountId: r.account_id,
  seq: r.seq,
  type: r.type,
  order: JSON.parse(r.payload) as OrderEvent['order'],
  createdAt: r.created_at,
});

/**
 * The stored columns of some fields. Only the port's five fields are taken, so a
 * caller passing a wider object (e.g. `{ ...current, note }`) cannot leak extra keys
 * into the event payload.
 */
export const columnsOf = (fields: OrderFields): OrderColumns => ({
  status: fields.status,
  items: JSON.stringify(fields.items),
  currency: fields.currency,
  discount_code: fields.discount?.code ?? null,
  discount_percent: fields.discount?.percent ?? null,
  note: fields.note ?? null,
});
