/**
 * The write decision of PUT, PATCH and cancel: given the order as it stands inside the
 * write transaction, what the write does to it. Pure (no I/O, no HTTP): the REST
 * binding calls it from the store's `writeOrder` callback after the precondition check,
 * so the rules see exactly the revision that gets replaced.
 */
import type { components } from '../../generated/openapi/types';
import type { Discount, OrderEvent, OrderFields, OrderRecord } from '../store';
import { canTransition, TRANSITIONS } from './transitions';
import type { ApiVersion } from './versions';

type Schemas = components['schemas'];

/**
 * A body as the contract's schema of its version reads it: `version` says which schema
 * validated it, so the field names (`discount_code` in 1, `discount` in 2) follow from
 * the type, not from a cast.
 */
type Versioned<K extends string, V1, V2> = { kind: K; version: 1; body: V1 } | { kind: K; version: 2; body: V2 };

/** A create (POST) with its validated body. */
export type CreateIntent = Versioned<'create', Schemas['OrderCreateV1'], Schemas['OrderCreateV2']>;
/** A full replacement (PUT) with its validated body. */
export type ReplaceIntent = Versioned<'replace', Schemas['OrderReplaceV1'], Schemas['OrderReplaceV2']>;
/** An RFC 7396 merge patch (PATCH) with its validated body. */
export type PatchIntent = Versioned<'patch', Schemas['OrderPatchV1'], Schemas['OrderPatchV2']>;
/** A cancel carries no body; its version is the response's. */
export type CancelIntent = { kind: 'cancel'; version: ApiVersion };

export type WriteIntent = ReplaceIntent | PatchIntent | CancelIntent;
export type WriteKind = WriteIntent['kind'];

export type Decision =
  | { apply: true; fields: OrderFields; eventType: OrderEvent['type'] }
  /** The status may not move that way, or the patch cannot apply to this order (409); `detail` says why. */
  | { apply: false; reason: 'conflict'; detail: string }
  /** The write changes nothing: no new revision, no event (every change, and only a change, is an event). */
  | { apply: false; reason: 'unchanged' };

/** The stored fields of a new order: a create always starts pending (status is not a create field). */
export const EMPTY_ORDER: OrderFields = { status: 'pending', items: [], currency: 'EUR', discount: null, note: null };

/** Writable fields as a client of `version` sees them: a replace body that changes nothing. */
export function writableView(order: OrderFields, version: 1): Schemas['OrderReplaceV1'];
export function writableView(order: OrderFields, version: 2): Schemas['OrderReplaceV2'];
export function writableView(order: OrderFields, version: ApiVersion): Schemas['OrderReplaceV1'] | Schemas['OrderReplaceV2'];
export function writableView(order: OrderFields, version: ApiVersion): Schemas['OrderReplaceV1'] | Schemas['OrderReplaceV2'] {
  const base = { status: order.status, items: order.items, currency: order.currency, note: order.note };
  return version === 1 ? { ...base, discount_code: order.discount?.code ?? null } : { ...base, discount: order.discount };
}

/**
 * A version-1 `discount_code` maps onto the stored discount: the same code keeps its
 * percent, a new code starts at 0 % (version 1 cannot express a percent). Absent
 * (undefined) keeps the current discount; null removes it.
 */
function discountFromV1(code: string | null | undefined, current: Discount | null): Discount | null {
  if (code === undefined) return current;
  if (code === null) return null;
  return current && current.code === code ? current : { code, percent: 0 };
}

/** A create or replace body -> stored fields; `current` supplies what the body omits. */
export function toFields(intent: CreateIntent | ReplaceIntent, current: OrderFields): OrderFields {
  const body = intent.body;
  const discount = intent.version === 1 ? discountFromV1(intent.body.discount_code, current.discount) : intent.body.discount === undefined ? current.discount : intent.body.discount;
  return {
    status: 'status' in body ? body.status : current.status,
    items: body.items ?? current.items,
    currency: body.currency ?? current.currency,
    discount,
    note: body.note === undefined ? current.note : body.note,
  };
}

/**
 * RFC 7396 on the order's writable view, member by member as the patch schemas allow
 * them: a present member replaces, `null` removes (`note` and the discount only: the
 * schemas refuse null elsewhere), and a version-2 `discount` object merges into the
 * current discount. A merge that leaves a discount without its code or percent (a new
 * discount needs both) is a string: why the patch cannot apply to this order.
 */
function patched(intent: PatchIntent, current: OrderFields): OrderFields | string {
  let discount: Discount | null;
  if (intent.version === 1) {
    discount = discountFromV1(intent.body.discount_code, current.discount);
  } else {
    const patch = intent.body.discount;
    if (patch === undefined || patch === null) {
      discount = patch === null ? null : current.discount;
    } else {
      const code = patch.code ?? current.discount?.code;
      const percent = patch.percent ?? current.discount?.percent;
      if (code === undefined || percent === undefined) return 'The order has no discount to merge into: a new discount needs both code and percent';
      discount = { code, percent };
    }
  }
  const body = intent.body;
  return {
    status: body.status ?? current.status,
    items: body.items ?? current.items,
    currency: body.currency ?? current.currency,
    discount,
    note: body.note === undefined ? current.note : body.note,
  };
}

/** The fields of a new order from a validated create body. */
export function createFields(intent: CreateIntent): OrderFields {
  return { ...toFields(intent, EMPTY_ORDER), status: 'pending' };
}

function sameFields(a: OrderFields, b: OrderFields): boolean {
  return a.status === b.status && a.currency === b.currency && a.note === b.note && JSON.stringify(a.items) === JSON.stringify(b.items) && JSON.stringify(a.discount) === JSON.stringify(b.discount);
}

export function decideWrite(current: OrderRecord, intent: WriteIntent): Decision {
  let fields: OrderFields;
  if (intent.kind === 'cancel') {
    fields = { ...current, status: 'cancelled' };
  } else if (intent.kind === 'patch') {
    const result = patched(intent, current);
    if (typeof result === 'string') return { apply: false, reason: 'conflict', detail: result };
    fields = result;
  } else {
    fields = toFields(intent, current);
  }
  const kind = intent.kind;
  if (!canTransition(current.status, fields.status) || (kind === 'cancel' && current.status === 'cancelled')) {
    const allowed = (TRANSITIONS[current.status] ?? []).join(', ') || 'none';
    return { apply: false, reason: 'conflict', detail: `Status ${current.status} cannot become ${fields.status}; allowed: ${allowed}` };
  }
  if (sameFields(fields, current)) return { apply: false, reason: 'unchanged' };
  // The event says what happened: a cancellation, or an update (a note edit on an
  // order that is already cancelled is an update, not a second cancellation).
  const cancelled = fields.status === 'cancelled' && current.status !== 'cancelled';
  return { apply: true, fields: pick(fields), eventType: cancelled ? 'order.cancelled' : 'order.updated' };
}

const pick = (f: OrderFields): OrderFields => ({ status: f.status, items: f.items, currency: f.currency, discount: f.discount, note: f.note });
