/**
 * The one reading of an order id written as text (a path segment, a GraphQL `ID`, a
 * page cursor, a stream position). The contract's `orderId` is an integer from 1 to
 * 2^53 - 1: every id is a positive safe integer, so it survives JSON numbers in every
 * client exactly. One canonical spelling per id (no sign, no leading zero, no `1.`, no
 * exponent) keeps one URL per order and one cache key per read.
 */

/** The largest id the contract allows (openapi `OrderId`: maximum 9007199254740991). */
export const ORDER_ID_MAX = Number.MAX_SAFE_INTEGER;

/**
 * The one accepted spelling of an integer written as text, wherever the service reads one
 * (an integer parameter of any operation, an order id, a stream position): one resource,
 * one URL (`/orders/01` or `/orders/1.` is not `/orders/1`; `-0` is not `0`).
 */
export const CANONICAL_INTEGER = /^(0|-?[1-9][0-9]*)$/;

/**
 * The integer `text` spells canonically, or null. Its value must also be a safe integer:
 * past 2^53 a number has no exact double, and a validator would judge a neighbour instead.
 */
export function parseCanonicalInteger(text: string): number | null {
  // 17 characters hold every safe integer with its sign; a longer text is refused before it is matched.
  if (text.length > 17 || !CANONICAL_INTEGER.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** The id `text` names, or null when it is not the canonical spelling of an id in 1..ORDER_ID_MAX. */
export function parseOrderId(text: string): number | null {
  const n = parseCanonicalInteger(text);
  return n !== null && n >= 1 ? n : null;
}
