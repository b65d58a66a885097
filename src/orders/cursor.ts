/**
 * Opaque keyset cursor for GET /orders: the last id of the page, base64url-encoded
 * with a version prefix so the format can change without breaking links in flight.
 * Keyset (not offset) paging visits every order exactly once even while orders are
 * inserted. Tampering can only move the cursor within the caller's own orders.
 */
import { parseOrderId } from './orderId';

const PREFIX = 'c1:';

export function encodeCursor(afterId: number): string {
  return Buffer.from(`${PREFIX}${afterId}`, 'utf8').toString('base64url');
}

/**
 * The id to continue after, or null when the cursor is not in the form this service writes:
 * its exact encoding too (Buffer's decoder skips characters it does not know and takes
 * spare bits as given, so `YzE6M1` would read as `YzE6Mw`, `c1:3`).
 */
export function decodeCursor(cursor: string): number | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(PREFIX)) return null;
  const rest = text.slice(PREFIX.length);
  // 0 starts the first page; anything else is an order id.
  const id = rest === '0' ? 0 : parseOrderId(rest);
  return id !== null && encodeCursor(id) === cursor ? id : null;
}
