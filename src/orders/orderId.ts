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
 * The canonical decimal shape of an id: a non-zero digit, then at most as many digits as
 * ORDER_ID_MAX has after its first. The shape alone admits a few 16-digit numbers above
 * the bound; `parseOrderId` refuses those by value.
 */
export const ORDER_ID_TEXT = new RegExp(`^[1-9][0-9]{0,${String(ORDER_ID_MAX).length - 1}}$`);

/** The id `text` names, or null when it is not the canonical spelling of an id in 1..ORDER_ID_MAX. */
export function parseOrderId(text: string): number | null {
  if (!ORDER_ID_TEXT.test(text)) return null;
  const n = Number(text);
  return n <= ORDER_ID_MAX ? n : null;
}
