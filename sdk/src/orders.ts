import type { components, Currency, OrderStatus } from './generated/openapi.js';
import { unwrap, type RestClient } from './client.js';
import { OrderlineError } from './errors.js';

export type { Currency, OrderStatus };
/**
 * An order (version 2). `status` is an open set (the known statuses autocomplete; a
 * status added later still type-checks: keep a default case), `currency` ISO 4217.
 */
export interface Order extends Omit<components['schemas']['OrderV2'], 'status' | 'currency'> {
  status: OrderStatus;
  currency: Currency;
}
/** A merge patch (RFC 7396) of an order: `null` removes an optional field. */
export interface OrderPatch extends Omit<components['schemas']['OrderPatchV2'], 'status' | 'currency'> {
  status?: OrderStatus;
  currency?: Currency;
}

/** `{ signal }` when there is one: RequestInit's `signal` takes no `undefined` under exactOptionalPropertyTypes. */
export const signalOf = (signal: AbortSignal | undefined): { signal?: AbortSignal } => (signal ? { signal } : {});

export interface CallOptions {
  /** Cancels the call (and its retries): it rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

export interface UpdateOrderOptions extends CallOptions {
  /** Read-change-write rounds before giving up on 412s (default 5). */
  attempts?: number | undefined;
}

const isPreconditionFailed = (err: unknown): boolean => err instanceof OrderlineError && err.status === 412;

/**
 * Reads an order, computes a merge patch from it, and writes it with If-Match. On 412
 * (someone else wrote in between) it reloads and reapplies `change` to the fresh
 * order, up to `attempts` times: the lost-update-free read-modify-write. `change`
 * returns null to give up (e.g. the fresh state makes the change moot). `change` may
 * run more than once, always on the order as it stands: keep it a function of that.
 */
export async function updateOrder(api: RestClient, orderId: number, change: (current: Order) => OrderPatch | null, options: UpdateOrderOptions = {}): Promise<Order> {
  const { attempts = 5, signal } = options;
  for (let i = 0; i < attempts; i++) {
    const read = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId } }, ...signalOf(signal) });
    const current = await unwrap(read);
    const patch = change(current);
    if (patch === null) return current;
    const etag = read.response.headers.get('etag');
    if (!etag) throw new OrderlineError(read.response.status, undefined, { code: 'BAD_RESPONSE', message: 'the server sent no ETag' });
    try {
      return await unwrap(api.PATCH('/v2/orders/{orderId}', { params: { path: { orderId }, header: { 'If-Match': etag } }, body: patch, ...signalOf(signal) }));
    } catch (err) {
      if (!isPreconditionFailed(err)) throw err;
    }
  }
  throw new OrderlineError(412, undefined, { code: 'CONFLICT_RETRIES_EXHAUSTED', message: `order ${orderId}: still conflicting after ${attempts} attempts` });
}

/** One page of the caller's orders; `next` is the opaque cursor of the following page (absent on the last). */
export interface OrderPage {
  orders: Order[];
  next: string | undefined;
}

export interface PageOptions extends CallOptions {
  /** Orders per page, 1..100 (absent: the server's default, 20). */
  limit?: number | undefined;
  /** The cursor of the page to start from (a previous page's `next`); absent: the first page. */
  page?: string | undefined;
}

/** The cursor in a `_links.next` href, passed on as given (opaque: never rebuilt). */
const cursorOf = (href: string | undefined): string | undefined => (href === undefined ? undefined : (new URL(href, 'http://link.invalid').searchParams.get('page') ?? undefined));

/**
 * One page of the caller's orders: for a "load more" view, keep `next` and pass it back
 * as `page` when the user asks for more.
 */
export async function listOrders(api: RestClient, options: PageOptions = {}): Promise<OrderPage> {
  const query = { ...(options.limit === undefined ? {} : { limit: options.limit }), ...(options.page === undefined ? {} : { page: options.page }) };
  const res = await unwrap(api.GET('/v2/orders', { params: { query }, ...signalOf(options.signal) }));
  return { orders: res.orders, next: cursorOf(res._links.next?.href) };
}

/** Every page of the caller's orders, following the server's `_links.next`. */
export async function* orderPages(api: RestClient, options: PageOptions = {}): AsyncGenerator<OrderPage> {
  let page = options.page;
  for (;;) {
    const p = await listOrders(api, { ...options, page });
    yield p;
    if (p.next === undefined) return;
    page = p.next;
  }
}

/** Every order of the caller, one by one, across pages (`orderPages` for the pages themselves). */
export async function* allOrders(api: RestClient, options: PageOptions = {}): AsyncGenerator<Order> {
  for await (const p of orderPages(api, options)) yield* p.orders;
}
