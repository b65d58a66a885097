/**
 * The order operations of contracts/openapi.yaml. One implementation per behaviour,
 * parameterized by the version the path fixes (`/orders` negotiates, `/v1`, `/v2`
 * fix it); the 21 generated operations are bound to it at the bottom.
 */
import type * as H from '../../../generated/openapi/handlers';
import * as validators from '../../../generated/openapi/validators';
import type { HandlerContext } from './dispatch';
import { evaluate } from '../conditional';
import { negotiate, type Family, type Negotiated } from './negotiate';
import { problem, PROBLEM_MEDIA_TYPE, type ProblemCode } from '../problem';
import type { Metrics } from '../metrics';
import type { OrderEvent, OrderRecord, Store } from '../../store';
import { createFields, decideWrite, decodeCursor, encodeCursor, represent, VERSIONS, type ApiVersion, type WriteKind } from '../../orders';
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
/** Every representation's tag of the order's current revision: If-Match accepts any of them. */
const allTags = (order: OrderRecord): string[] => VERSIONS.flatMap((v) => [etagOf(order, v, false), etagOf(order, v, true)]);
/** Reads never send If-Match, so they never need the other representations' tags. */
const NO_TAGS: readonly string[] = [];

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

    async function write(req: Req, ctx: HandlerContext, kind: WriteKind): Promise<Res> {
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
        const decision = decideWrite(current, { kind, version, body: req.body });
        if (decision.apply) return decision;
        if (decision.reason === 'conflict') conflict = decision.detail;
        else seen = current;
        return { apply: false, reason: decision.reason };
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
      const { order, event } = await store.createOrder(ctx.account.id, createFields(req.body, version));
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
