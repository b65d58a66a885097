import type { components } from './generated/openapi.js';
import type { RestClient } from './client.js';

export type Order = components['schemas']['OrderV2'];
export type OrderPatch = components['schemas']['OrderPatchV2'];
export type Problem = components['schemas']['Problem'];

/** A REST call that failed: the HTTP status and the RFC 9457 problem the server sent (`code` is its stable code). */
export class OrderlineError extends Error {
  override readonly name = 'OrderlineError';
  readonly code: string | undefined;
  constructor(
    readonly status: number,
    readonly problem: Partial<Problem> | undefined,
  ) {
    super(`HTTP ${status}: ${problem?.detail ?? problem?.title ?? 'error'}`);
    this.code = problem?.code;
  }
}

const problemOf = (error: unknown): Partial<Problem> | undefined => (error && typeof error === 'object' ? error : undefined);

/**
 * Reads an order, computes a merge patch from it, and writes it with If-Match. On 412
 * (someone else wrote in between) it reloads and reapplies `change` to the fresh
 * order, up to `attempts` times: the lost-update-free read-modify-write.
 * `change` returns null to give up (e.g. the fresh state makes the change moot).
 */
export async function updateOrder(api: RestClient, orderId: number, change: (current: Order) => OrderPatch | null, attempts = 5): Promise<Order> {
  for (let i = 0; i < attempts; i++) {
    const read = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId } } });
    if (!read.data) throw new OrderlineError(read.response.status, problemOf(read.error));
    const patch = change(read.data);
    if (patch === null) return read.data;
    const etag = read.response.headers.get('etag');
    if (!etag) throw new Error('the server sent no ETag');
    const write = await api.PATCH('/v2/orders/{orderId}', {
      params: { path: { orderId }, header: { 'If-Match': etag } },
      body: patch,
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    if (write.data) return write.data;
    if (write.response.status !== 412) throw new OrderlineError(write.response.status, problemOf(write.error));
  }
  throw new Error(`order ${orderId}: still conflicting after ${attempts} attempts`);
}

/**
 * Every order of the caller, page by page, following the server's `_links.next`
 * verbatim (its cursor is opaque: the client never rebuilds page parameters).
 */
export async function* allOrders(api: RestClient, limit = 50): AsyncGenerator<Order> {
  let query: { page?: string; limit?: number } = { limit };
  for (;;) {
    const res = await api.GET('/v2/orders', { params: { query } });
    if (!res.data) throw new OrderlineError(res.response.status, problemOf(res.error));
    yield* res.data.orders;
    const next = res.data._links.next?.href;
    if (!next) return;
    // The link is followed as given: its query string is passed through unchanged.
    const params = new URL(next, 'http://link.invalid').searchParams;
    query = Object.fromEntries(params.entries());
  }
}
