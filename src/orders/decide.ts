/**
 * The write decision of PUT, PATCH and cancel: given the order as it stands inside the
 * write transaction, what the write does to it. Pure (no I/O, no HTTP): the REST
 * binding calls it from the store's `writeOrder` callback after the precondition check,
 * so the rules see exactly the revision that gets replaced.
 */
import type { Discount, OrderEvent, OrderFields, OrderRecord } from '../store';
import { applyMergePatch } from './mergePatch';
import { canTransition, TRANSITIONS } from './transitions';
import type { ApiVersion } from './versions';

export type WriteKind = 'replace' | 'patch' | 'cancel';

export interface WriteIntent {
  kind: WriteKind;
  /** The version the body is written in (its field names). */
  version: ApiVersion;
  /** The validated body: a full order (replace) or a merge patch (patch); none for cancel. */
  body?: unknown;
}

export type Decision =
  | { apply: true; fields: OrderFields; eventType: OrderEvent['type'] }
  /** The status may not move that way (409); `detail` says which moves are allowed. */
  | { apply: false; reason: 'conflict'; detail: string }
  /** The write changes nothing: no new revision, no event (invariant 3). */
  | { apply: false; reason: 'unchanged' };

/** The stored fields of a new order: a create always starts pending (status is not a create field). */
export const EMPTY_ORDER: OrderFields = { status: 'pending', items: [], currency: 'EUR', discount: null, note: null };

/** Writable fields as a client of `version` sees them, for merge patches. */
export function writableView(order: OrderFields, version: ApiVersion): Record<string, unknown> {
  const base = { status: order.status, items: order.items, currency: order.currency, note: order.note };
  return version === 1 ? { ...base, discount_code: order.discount?.code ?? null } : { ...base, discount: order.discount };
}

/**
 * A version-1 `discount_code` maps onto the stored discount: the same code keeps its
 * percent, a new code starts at 0 % (version 1 cannot express a percent).
 */
function discountFromV1(code: string | null | undefined, current: Discount | null): Discount | null {
  if (code === null || code === undefined) return null;
  return current && current.code === code ? current : { code, percent: 0 };
}

/** A validated body of either version -> stored fields; `current` supplies what the body omits. */
export function toFields(body: Record<string, unknown>, version: ApiVersion, current: OrderFields): OrderFields {
  const discount =
    version === 1
      ? 'discount_code' in body
        ? discountFromV1(body.discount_code as string | null, current.discount)
        : current.discount
      : 'discount' in body
        ? (body.discount as Discount | null)
        : current.discount;
  return {
    status: (body.status as string | undefined) ?? current.status,
    items: (body.items as OrderFields['items'] | undefined) ?? current.items,
    currency: (body.currency as string | undefined) ?? current.currency,
    discount,
    note: 'note' in body ? (body.note as string | null) : current.note,
  };
}

/** The fields of a new order from a validated create body of `version`. */
export function createFields(body: unknown, version: ApiVersion): OrderFields {
  return { ...toFields(body as Record<string, unknown>, version, EMPTY_ORDER), status: 'pending' };
}

function sameFields(a: OrderFields, b: OrderFields): boolean {
  return (
    a.status === b.status &&
    a.currency === b.currency &&
    a.note === b.note &&
    JSON.stringify(a.items) === JSON.stringify(b.items) &&
    JSON.stringify(a.discount) === JSON.stringify(b.discount)
  );
}

export function decideWrite(current: OrderRecord, intent: WriteIntent): Decision {
  const { kind, version } = intent;
  let fields: OrderFields;
  if (kind === 'cancel') {
    fields = { ...current, status: 'cancelled' };
  } else if (kind === 'patch') {
    const merged = applyMergePatch(writableView(current, version), intent.body) as Record<string, unknown>;
    // The merged document is complete: a member the patch removed (null) is now absent, meaning null.
    fields = toFields({ note: null, [version === 1 ? 'discount_code' : 'discount']: null, ...merged }, version, current);
  } else {
    fields = toFields(intent.body as Record<string, unknown>, version, current);
  }
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
