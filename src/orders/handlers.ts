/**
 * The order operations of contracts/openapi.yaml. One implementation per behaviour,
 * parameterized by the version the path fixes (`/orders` negotiates, `/v1`, `/v2`
 * fix it); the 21 generated operations are bound to it at the bottom.
 */
import type * as H from '../../generated/openapi/handlers';
import * as validators from '../../generated/openapi/validators';
import type { HandlerContext } from '../http/dispatch';
import { evaluate } from '../http/conditional';
import { negotiate, type ApiVersion, type Family, type Negotiated } from '../http/negotiate';
import { problem, PROBLEM_MEDIA_TYPE, type ProblemCode } from '../http/problem';
import type { Metrics } from '../http/metrics';
import type { Discount, OrderEvent, OrderFields, OrderRecord, Store } from '../store';
import { decodeCursor, encodeCursor } from './cursor';
import { applyMergePatch } from './mergePatch';
import { represent } from './representation';
import { canTransition, TRANSITIONS } from './transitions';
import { deprecationHeaders } from './deprecation';

export interface OrderDeps {
  store: Store;
  metrics: Metrics;
  /** Called after each committed write with its event (the realtime hub listens here). */
  onEvent?: (event: OrderEvent) => void;
}

type OrderOps =
  | 'listOrders' | 'listOrdersV1' | 'listOrdersV2'
  | 'createOrder' | 'createOrderV1' | 'createOrderV2'
  | 'getOrder' | 'getOrderV1' | 'getOrderV2'
  | 'headOrder' | 'headOrderV1' | 'headOrderV2'
  | 'replaceOrder' | 'replaceOrderV1' | 'replaceOrderV2'
  | 'patchOrder' | 'patchOrderV1' | 'patchOrderV2'
  | 'cancelOrder' | 'cancelOrderV1' | 'cancelOrderV2';

/** What the shared implementations return; each binding narrows it to its operation's generated type. */
interface Res {
  status: number;
  headers?: Record<string, string>;
  contentType?: string;
  body?: unknown;
}
interface Req {
  params: { orderId?: number };
  query: { page?: string; limit?: number };
  headers: { Accept?: string; 'Api-Version'?: number; 'If-None-Match'?: string; 'If-Match'?: string };
  contentType?: string;
  body?: unknown;
}

export const CACHE_CONTROL = 'private, max-age=0, must-revalidate';
export const VARY = 'Accept, Api-Version';
const DEFAULT_LIMIT = 20;

const fail = (code: ProblemCode, detail?: string, headers?: Record<string, string>): Res => ({
  status: problem(code).status,
  headers,
  contentType: PROBLEM_MEDIA_TYPE,
  body: problem(code, detail),
});

/** Strong ETag of one representation: revision, version and media type kind (`j` JSON, `n` vendor). */
export const etagOf = (order: OrderRecord, version: ApiVersion, vendor: boolean): string =>
  `"${order.id}-${order.revision}-v${version}${vendor ? 'n' : 'j'}"`;
const allTags = (order: OrderRecord): string[] =>
  [1, 2].flatMap((v) => [etagOf(order, v as ApiVersion, false), etagOf(order, v as ApiVersion, true)]);
/** Reads never send If-Match, so they never need the other representations' tags. */
const NO_TAGS: readonly string[] = [];

/** Writable fields as a client of `version` sees them, for merge patches. */
function writableView(order: OrderRecord, version: ApiVersion): Record<string, unknown> {
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
function toFields(body: Record<string, unknown>, version: ApiVersion, current: OrderFields): OrderFields {
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

/** The body's version: a vendor Content-Type names it; otherwise the request's version. */
function bodyVersion(contentType: string | undefined, negotiated: ApiVersion): ApiVersion {
  const m = /version=(\d+)/.exec(contentType ?? '');
  return m ? (Number(m[1]) as ApiVersion) : negotiated;
}

const BODY_SCHEMAS = {
  create: { 1: validators.OrderCreateV1, 2: validators.OrderCreateV2 },
  replace: { 1: validators.OrderReplaceV1, 2: validators.OrderReplaceV2 },
  patch: { 1: validators.OrderPatchV1, 2: validators.OrderPatchV2 },
} as const;

/** On an unversioned path the contract accepts either version's body; the selected version's schema decides. */
function checkBody(kind: keyof typeof BODY_SCHEMAS, version: ApiVersion, body: unknown): Res | null {
  const validate = BODY_SCHEMAS[kind][version];
  if (validate(body)) return null;
  const res = fail('VALIDATION_FAILED', `The body is not a valid version ${version} ${kind} body`);
  (res.body as Record<string, unknown>).errors = (validate.errors ?? []).map((e) => ({ pointer: e.instancePath || '/', message: e.message ?? 'invalid' }));
  return res;
}

type WriteRefusal = 'precondition_required' | 'precondition_failed' | 'conflict' | 'unchanged';

export function orderHandlers(deps: OrderDeps): Pick<H.Handlers<HandlerContext>, OrderOps> {
  const { store, metrics } = deps;

  function select(req: Req, ctx: HandlerContext, family: Family, pathVersion: ApiVersion | null): Negotiated {
    return negotiate({
      family,
      pathVersion,
      accept: req.headers.Accept,
      apiVersion: req.headers['Api-Version'],
      pinned: ctx.account.pinnedVersion,
    });
  }

  function headersFor(ctx: HandlerContext, version: ApiVersion, extra: Record<string, string> = {}): Record<string, string> {
    if (version === 1) metrics.deprecatedReads.inc({ account: ctx.account.name, field: 'discount_code' });
    return { 'Cache-Control': CACHE_CONTROL, Vary: VARY, 'Api-Version': String(version), ...deprecationHeaders(version), ...extra };
  }

  function orderResponse(status: number, order: OrderRecord, neg: Negotiated & { ok: true }, ctx: HandlerContext, base: string, extra: Record<string, string> = {}): Res {
    return {
      status,
      headers: headersFor(ctx, neg.version, { ETag: etagOf(order, neg.version, neg.vendor), ...extra }),
      contentType: neg.contentType,
      body: represent(order, neg.version, base),
    };
  }

  const impl = (pathVersion: ApiVersion | null) => {
    const base = pathVersion ? `/v${pathVersion}/orders` : '/orders';

    async function read(req: Req, ctx: HandlerContext, method: 'GET' | 'HEAD'): Promise<Res> {
      const order = await store.getOrder(ctx.account.id, req.params.orderId!);
      if (!order) return fail('NOT_FOUND', `Order ${req.params.orderId} not found`);
      const neg = select(req, ctx, 'order', pathVersion);
      if (!neg.ok) return fail('NOT_ACCEPTABLE', neg.detail);
      const tag = etagOf(order, neg.version, neg.vendor);
      const outcome = evaluate({ method, ifNoneMatch: req.headers['If-None-Match'], current: { selected: tag, all: NO_TAGS } });
      if (outcome === 'not_modified') {
        return { status: 304, headers: { ETag: tag, 'Cache-Control': CACHE_CONTROL, Vary: VARY } };
      }
      return orderResponse(200, order, neg, ctx, base);
    }

    async function write(req: Req, ctx: HandlerContext, kind: 'replace' | 'patch' | 'cancel'): Promise<Res> {
      const neg = select(req, ctx, 'order', pathVersion);
      if (!neg.ok) return fail('NOT_ACCEPTABLE', neg.detail);
      const version = bodyVersion(req.contentType, neg.version);
      if (kind !== 'cancel') {
        const bad = checkBody(kind, version, req.body);
        if (bad) return bad;
      }
      const ifMatch = req.headers['If-Match'];
      let conflict = '';
      // The row the decision saw, for answering a write that changes nothing without a re-read.
      let seen: OrderRecord | undefined;
      const result = await store.writeOrder<WriteRefusal>(ctx.account.id, req.params.orderId!, (current) => {
        // Inside the write transaction: 428 and 412 see the revision that would be replaced.
        if (ifMatch === undefined) return { apply: false, reason: 'precondition_required' };
        const outcome = evaluate({ method: 'PUT', ifMatch, current: { selected: etagOf(current, version, false), all: allTags(current) } });
        if (outcome !== 'proceed') return { apply: false, reason: 'precondition_failed' };
        let fields: OrderFields;
        if (kind === 'cancel') {
          fields = { ...current, status: 'cancelled' };
        } else if (kind === 'patch') {
          const merged = applyMergePatch(writableView(current, version), req.body) as Record<string, unknown>;
          // The merged document is complete: a member the patch removed (null) is now absent, meaning null.
          fields = toFields({ note: null, [version === 1 ? 'discount_code' : 'discount']: null, ...merged }, version, current);
        } else {
          fields = toFields(req.body as Record<string, unknown>, version, current);
        }
        if (!canTransition(current.status, fields.status) || (kind === 'cancel' && current.status === 'cancelled')) {
          conflict = `Status ${current.status} cannot become ${fields.status}; allowed: ${(TRANSITIONS[current.status] ?? []).join(', ') || 'none'}`;
          return { apply: false, reason: 'conflict' };
        }
        const same =
          fields.status === current.status &&
          fields.currency === current.currency &&
          fields.note === current.note &&
          JSON.stringify(fields.items) === JSON.stringify(current.items) &&
          JSON.stringify(fields.discount) === JSON.stringify(current.discount);
        // A write that changes nothing is not a state change: no new revision, no event (invariant 3).
        if (same) {
          seen = current;
          return { apply: false, reason: 'unchanged' };
        }
        return { apply: true, fields, eventType: fields.status === 'cancelled' ? 'order.cancelled' : 'order.updated' };
      });
      if (!result.ok) {
        switch (result.reason) {
          case 'not_found':
            return fail('NOT_FOUND', `Order ${req.params.orderId} not found`);
          case 'precondition_required':
            return fail('PRECONDITION_REQUIRED', 'Send If-Match with the ETag you last saw');
          case 'precondition_failed':
            return fail('PRECONDITION_FAILED', 'The order changed since that ETag: reload it and reapply your change');
          case 'conflict':
            return fail('CONFLICT', conflict);
          case 'unchanged':
            return orderResponse(200, seen!, neg, ctx, base);
        }
      }
      deps.onEvent?.(result.event);
      return orderResponse(200, result.order, neg, ctx, base);
    }

    async function create(req: Req, ctx: HandlerContext): Promise<Res> {
      const neg = select(req, ctx, 'order', pathVersion);
      if (!neg.ok) return fail('NOT_ACCEPTABLE', neg.detail);
      const version = bodyVersion(req.contentType, neg.version);
      const bad = checkBody('create', version, req.body);
      if (bad) return bad;
      const empty: OrderFields = { status: 'pending', items: [], currency: 'EUR', discount: null, note: null };
      // A create always starts pending: status is not a create field (the schema forbids it).
      const fields = { ...toFields(req.body as Record<string, unknown>, version, empty), status: 'pending' };
      const { order, event } = await store.createOrder(ctx.account.id, fields);
      deps.onEvent?.(event);
      return orderResponse(201, order, neg, ctx, base, { Location: `${base}/${order.id}` });
    }

    async function list(req: Req, ctx: HandlerContext): Promise<Res> {
      const neg = select(req, ctx, 'order-list', pathVersion);
      if (!neg.ok) return fail('NOT_ACCEPTABLE', neg.detail);
      let after = 0;
      if (req.query.page !== undefined) {
        const decoded = decodeCursor(req.query.page);
        if (decoded === null) return fail('BAD_CURSOR', 'The page cursor is not one this service issued; follow _links.next');
        after = decoded;
      }
      const limit = req.query.limit ?? DEFAULT_LIMIT;
      const page = await store.listOrders(ctx.account.id, after, limit);
      const self = `${base}?${new URLSearchParams({ ...(req.query.page ? { page: req.query.page } : {}), ...(req.query.limit ? { limit: String(limit) } : {}) })}`;
      const last = page.orders[page.orders.length - 1];
      const links: Record<string, { href: string }> = { self: { href: self.replace(/\?$/, '') } };
      if (page.hasMore && last) links.next = { href: `${base}?${new URLSearchParams({ page: encodeCursor(last.id), limit: String(limit) })}` };
      return {
        status: 200,
        headers: headersFor(ctx, neg.version),
        contentType: neg.contentType,
        body: { orders: page.orders.map((o) => represent(o, neg.version, base)), _links: links },
      };
    }

    return {
      list,
      create,
      get: (req: Req, ctx: HandlerContext) => read(req, ctx, 'GET'),
      head: (req: Req, ctx: HandlerContext) => read(req, ctx, 'HEAD'),
      replace: (req: Req, ctx: HandlerContext) => write(req, ctx, 'replace'),
      patch: (req: Req, ctx: HandlerContext) => write(req, ctx, 'patch'),
      cancel: (req: Req, ctx: HandlerContext) => write(req, ctx, 'cancel'),
    };
  };

  const [n, v1, v2] = [impl(null), impl(1), impl(2)];
  // The shared implementations return `Res`; each binding narrows it to the operation's
  // generated response type. The contract tests validate every response against the
  // contract, which is what checks statuses and media types at run time.
  const bind =
    <Q, R>(fn: (req: Req, ctx: HandlerContext) => Promise<Res>) =>
    (req: Q, ctx: HandlerContext) =>
      fn(req as Req, ctx) as unknown as Promise<R>;
  return {
    listOrders: bind(n.list), listOrdersV1: bind(v1.list), listOrdersV2: bind(v2.list),
    createOrder: bind(n.create), createOrderV1: bind(v1.create), createOrderV2: bind(v2.create),
    getOrder: bind(n.get), getOrderV1: bind(v1.get), getOrderV2: bind(v2.get),
    headOrder: bind(n.head), headOrderV1: bind(v1.head), headOrderV2: bind(v2.head),
    replaceOrder: bind(n.replace), replaceOrderV1: bind(v1.replace), replaceOrderV2: bind(v2.replace),
    patchOrder: bind(n.patch), patchOrderV1: bind(v1.patch), patchOrderV2: bind(v2.patch),
    cancelOrder: bind(n.cancel), cancelOrderV1: bind(v1.cancel), cancelOrderV2: bind(v2.cancel),
  };
}
