/**
 * PostgresStore's type parsers and row mappers: how values travel between pg and the
 * port's types (bigint ids as numbers, timestamptz as ISO strings, jsonb items, text
 * PostgreSQL can store).
 */
import { types as pgTypes, type CustomTypesConfig } from 'pg';
import type { OrderEvent, OrderFields, OrderItem, OrderRecord } from '../store';
import { toOrder as sharedToOrder, type OrderRow as SharedOrderRow } from '../rows';
import { StoreInputError } from '../errors';

export type OrderRow = SharedOrderRow<OrderItem[]>;
export interface EventRow {
  order_id: number;
  seq: number;
  account_id: number;
  type: OrderEvent['type'];
  payload: OrderRecord;
  created_at: string;
}

/**
 * Result parsing for this pool only (pg's global parsers stay untouched): `bigint` ids
 * as numbers, as the port types them (ids stay far below 2^53; a larger one throws
 * rather than rounding), and `timestamptz` as the ISO string the port returns.
 */
const INT8 = pgTypes.builtins.INT8;
const TIMESTAMPTZ = pgTypes.builtins.TIMESTAMPTZ;
type TypeId = Parameters<typeof pgTypes.getTypeParser>[0];
const parseTimestamptz = pgTypes.getTypeParser(TIMESTAMPTZ, 'text') as (v: string) => Date;
export const TYPES: CustomTypesConfig = {
  getTypeParser: ((oid: TypeId, format?: 'text' | 'binary') => {
    if (oid === INT8)
      return (v: string): number => {
        const n = Number(v);
        if (!Number.isSafeInteger(n)) throw new RangeError(`PostgresStore: bigint ${v} is beyond Number's exact range`);
        return n;
      };
    if (oid === TIMESTAMPTZ) return (v: string): string => parseTimestamptz(v).toISOString();
    return pgTypes.getTypeParser(oid, format) as (v: string) => unknown;
  }) as CustomTypesConfig['getTypeParser'],
};

export const toOrder = (r: OrderRow): OrderRecord => sharedToOrder(r, (items) => items);
/** jsonb stores object keys in its own order; rebuilt in `toOrder`'s, so a payload read back equals the order returned by the write. */
export const fromPayload = (p: OrderRecord): OrderRecord => ({
  id: p.id,
  accountId: p.accountId,
  revision: p.revision,
  status: p.status,
  items: p.items,
  currency: p.currency,
  discount: p.discount === null ? null : { code: p.discount.code, percent: p.discount.percent },
  note: p.note,
  createdAt: p.createdAt,
  updatedAt: p.updatedAt,
});
export const toEvent = (r: EventRow): OrderEvent => ({
  orderId: r.order_id,
  accountId: r.account_id,
  seq: r.seq,
  type: r.type,
  order: fromPayload(r.payload),
  createdAt: r.created_at,
});

/**
 * Text PostgreSQL cannot hold: `text` and `jsonb` refuse U+0000, which SQLite stores.
 * Refused before any statement runs, as the caller's input (`StoreInputError`), so it
 * never surfaces as a failure of the store.
 */
export const storable = (s: string): string => {
  if (s.includes('\u0000')) throw new StoreInputError('unstorable_text', 'Text containing U+0000 cannot be stored');
  return s;
};
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/**
 * The `jsonb` text of the items. A lone UTF-16 surrogate (valid in a JS string, refused
 * by jsonb) becomes U+FFFD, what a `text` column gets for it on both adapters (the
 * driver encodes UTF-8); U+0000 is refused as above.
 */
export const itemsJson = (items: OrderItem[]): string => JSON.stringify(items, (_k, v: unknown) => (typeof v === 'string' ? storable(v).replace(LONE_SURROGATE, '\ufffd') : v));
export const text = (s: string | null | undefined): string | null => (s == null ? null : storable(s));

/**
 * The bound columns ($status, $items, $currency, $discount_code, $discount_percent, $note)
 * of some fields. Only the port's five fields are taken, so a caller passing a wider
 * object cannot leak extra keys into the row or the event payload.
 */
export const columnsOf = (f: OrderFields): unknown[] => [text(f.status), itemsJson(f.items), text(f.currency), text(f.discount?.code), f.discount?.percent ?? null, text(f.note)];
