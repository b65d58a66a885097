/**
 * The order operations of contracts/openapi.yaml. One implementation per operation
 * family (`getOrder`, `getOrderV1`, `getOrderV2`): the request says which version its
 * path fixes (`pathVersion`, null where the version is negotiated), and the response is
 * the family's generated union, so `tsc` refuses a status or media type no operation of
 * the family declares.
 */
import type * as H from '../../../generated/openapi/handlers';
import type { ValidateFunction } from 'ajv';
import * as validators from '../../../generated/openapi/validators';
import type { AccountContext, OperationHandlers } from './operations';
import { evaluate, malformedTagField, malformedTagProblem, noTags } from '../conditional';
import { negotiate, VENDOR, type Family, type Negotiated } from './negotiate';
import { versionOf } from '../mediaType';
import { problem, PROBLEM_MEDIA_TYPE, PROBLEMS, type ProblemCode, type Problem } from '../problem';
import type { FieldReadTally } from '../fieldReads';
import type { Account, OrderEvent, OrderRecord, Store } from '../../store';
import { createFields, decideWrite, decodeCursor, encodeCursor, toV1, toV2, VERSIONS, type ApiVersion, type OrderV1, type OrderV2, type CreateIntent, type WriteIntent, type WriteKind } from '../../orders';
import { deprecationHeaders, isDeprecated } from './deprecation';
import { storedResponse } from './idempotency';
import { fieldErrors } from './fieldErrors';
import { RepresentationCache, serialized } from './representationCache';
import { orderPages, type Links } from './orderPages';

export interface OrderDeps {
  store: Store;
  /** Counts responses carrying a deprecated field, per account, so a field is removed only once its readers have moved. */
  fieldReads: FieldReadTally;
  /** Called after each committed write with its event (the realtime hub listens here). */
  onEvent?: (event: OrderEvent) => void;
  /** The order read's decision and representation cache (default: made from `store` and `fieldReads`). */
  reads?: OrderReads;
}

type OrderFamilies = 'listOrders' | 'createOrder' | 'getOrder' | 'headOrder' | 'replaceOrder' | 'patchOrder' | 'cancelOrder';

export const CACHE_CONTROL = 'private, max-age=0, must-revalidate';
export const VARY = 'Accept, Api-Version';

/** A problem response whose status is the code's own literal (so the family's union must declare it). */
function fail<C extends ProblemCode>(code: C, detail?: string, extra?: Partial<Problem>): { status: (typeof PROBLEMS)[C][0]; contentType: typeof PROBLEM_MEDIA_TYPE; body: Problem } {
  return { status: PROBLEMS[code][0], contentType: PROBLEM_MEDIA_TYPE, body: problem(code, detail, extra) };
}

/** Strong ETag of one representation: revision, version and media type kind (`j` JSON, `n` vendor). */
export const etagOf = (order: Pick<OrderRecord, 'id' | 'revision'>, version: ApiVersion, vendor: boolean): string => `"${order.id}-${order.revision}-v${version}${vendor ? 'n' : 'j'}"`;
/** Every representation's tag of the order's current revision: If-Match accepts any of them. */
const allTags = (order: OrderRecord): string[] => VERSIONS.flatMap((v) => [etagOf(order, v, false), etagOf(order, v, true)]);

type OrderPayload =
  { contentType: 'application/json'; body: OrderV1 | OrderV2 } | { contentType: `${typeof VENDOR.order}; version=1`; body: OrderV1 } | { contentType: `${typeof VENDOR.order}; version=2`; body: OrderV2 };

/** The order in the negotiated version and media type. Adding a version makes `tsc` ask for its case here. */
function orderPayload(order: OrderRecord, version: ApiVersion, vendor: boolean, base: string): OrderPayload {
  switch (version) {
    case 1:
      return vendor ? { contentType: `${VENDOR.order}; version=1`, body: toV1(order, base) } : { contentType: 'application/json', body: toV1(order, base) };
    case 2:
      return vendor ? { contentType: `${VENDOR.order}; version=2`, body: toV2(order, base) } : { contentType: 'application/json', body: toV2(order, base) };
  }
}

/** The body's version: a vendor Content-Type names it; otherwise the request's version. */
function bodyVersion(contentType: string | undefined, negotiated: ApiVersion): ApiVersion {
  const n = Number(versionOf(contentType) ?? negotiated);
  return VERSIONS.find((v) => v === n) ?? negotiated;
}

type BodyCheck<I> = { intent: I } | { bad: ReturnType<typeof fail<'VALIDATION_FAILED'>> };

/** The body as `validate` (a generated type guard) reads it, or the 400 naming its errors. */
function validated<T, I>(validate: ValidateFunction<T>, body: unknown, what: string, intent: (body: T) => I): BodyCheck<I> {
  if (validate(body)) return { intent: intent(body) };
  return { bad: fail('VALIDATION_FAILED', `The body is not a valid ${what} body`, { errors: fieldErrors('body', validate.errors) }) };
}

/**
 * The body as the contract reads it. A vendor `Content-Type` names its version, and a
 * versioned path (`/v1/orders`) fixes it: that version's schema alone decides. A plain
 * `application/json` body on a negotiated path is, in the contract, either version's
 * body (`anyOf`): the request's version reads it when its schema accepts it, else the
 * first other version whose schema does (an unpinned client still sending a version 1
 * `discount_code` to `/orders` keeps working while version 1 lives). A body no version
 * accepts was refused before this, by the contract's `anyOf` (the generated binding). A
 * version added to the contract makes `tsc` ask for its case in both switches below.
 */
function readBodyAs<I>(contentType: string | undefined, pathVersion: ApiVersion | null, negotiated: ApiVersion, read: (version: ApiVersion) => BodyCheck<I>): BodyCheck<I> {
  const named = versionOf(contentType);
  const first = read(bodyVersion(contentType, negotiated));
  if (!('bad' in first) || named !== undefined || pathVersion !== null) return first;
  for (const v of VERSIONS) {
    if (v === negotiated) continue;
    const other = read(v);
    if (!('bad' in other)) return other;
  }
  return first;
}

function createIntent(version: ApiVersion, body: unknown): BodyCheck<CreateIntent> {
  const what = `version ${version} create`;
  switch (version) {
    case 1:
      return validated(validators.OrderCreateV1, body, what, (b): CreateIntent => ({ kind: 'create', version, body: b }));
    case 2:
      return validated(validators.OrderCreateV2, body, what, (b): CreateIntent => ({ kind: 'create', version, body: b }));
  }
}

function writeIntent(kind: WriteKind, version: ApiVersion, body: unknown): BodyCheck<WriteIntent> {
  if (kind === 'cancel') return { intent: { kind, version } };
  const what = `version ${version} ${kind}`;
  switch (version) {
    case 1:
      return kind === 'replace'
        ? validated(validators.OrderReplaceV1, body, what, (b): WriteIntent => ({ kind, version, body: b }))
        : validated(validators.OrderPatchV1, body, what, (b): WriteIntent => ({ kind, version, body: b }));
    case 2:
      return kind === 'replace'
        ? validated(validators.OrderReplaceV2, body, what, (b): WriteIntent => ({ kind, version, body: b }))
        : validated(validators.OrderPatchV2, body, what, (b): WriteIntent => ({ kind, version, body: b }));
  }
}

/** Why a write was not applied, with what the answer needs: the conflict's detail, or the unchanged row (answered without a re-read). */
type WriteRefusal = { kind: 'precondition_required' | 'precondition_failed' | 'none_matched' } | { kind: 'conflict'; detail: string } | { kind: 'unchanged'; order: OrderRecord };

/** What every order request carries, whatever its family. */
interface OrderRequest {
  pathVersion: ApiVersion | null;
  headers: { Accept?: string; 'Api-Version'?: number };
}

/** The fields of a list representation: the contract declares them required on its 200s. */
type ListHeaders = Readonly<{ 'Cache-Control': string; Vary: string; 'Api-Version': string } & Record<string, string>>;
/** The fields of an order representation (its 200s and 201s): the list's and the ETag. */
type OrderHeaders = ListHeaders & Readonly<{ ETag: string }>;

/** What a GET of one (order, revision, version, media type, path) answers: computed once. */
export interface CachedRead {
  etag: string;
  headers: OrderHeaders;
  payload: OrderPayload;
  /**
   * The payload's JSON text (what a 200 sends) and its length in bytes. Text, not a
   * Buffer: node:http writes a string body with the header block in one string write,
   * a Buffer as a separate chunk of a writev (measured slower on a cached 200).
   */
  json: string;
  length: number;
}

/** The headers of a 304: the selected representation's tag, Cache-Control and Vary (RFC 9110 15.4.5). */
export const notModifiedHeaders = (etag: string) => ({ ETag: etag, 'Cache-Control': CACHE_CONTROL, Vary: VARY });

/** The read of one order, as asked: the id, the version the URL fixes, and the negotiation and conditional headers. */
export interface ReadQuery {
  orderId: number;
  pathVersion: ApiVersion | null;
  accept?: string;
  apiVersion?: number;
  ifNoneMatch?: string;
}

export type ReadAnswer = { status: 404 } | { status: 406; detail: string } | { status: 304; etag: string } | { status: 200; entry: CachedRead; version: ApiVersion };

export interface OrderReads {
  /**
   * The answer to a read, with no side effect but filling the representation cache.
   * Rejects with a store error.
   */
  decide(account: Account, q: ReadQuery): Promise<ReadAnswer>;
  /** Call when a 200 is sent: a version-1 read counts as a deprecated read. */
  served(account: Account, version: ApiVersion): void;
}

/**
 * The rules of GET and HEAD of one order: the revision alone (one indexed column)
 * decides a 304 and finds a cached 200; only a representation not yet cached reads and
 * maps the row.
 */
export function orderReads({ store, fieldReads }: Pick<OrderDeps, 'store' | 'fieldReads'>): OrderReads {
  // Weighed by its JSON text (2 bytes per UTF-16 unit) plus headers and key, roughly.
  const cache = new RepresentationCache<CachedRead>(undefined, (e, key) => 512 + 2 * (key.length + e.json.length));

  function cached(order: OrderRecord, neg: Negotiated & { ok: true }, pathVersion: ApiVersion | null, key: string): CachedRead {
    const etag = etagOf(order, neg.version, neg.vendor);
    const payload = orderPayload(order, neg.version, neg.vendor, baseOf(pathVersion));
    const json = JSON.stringify(payload.body);
    serialized.set(payload.body, json);
    const headers = { 'Cache-Control': CACHE_CONTROL, Vary: VARY, 'Api-Version': String(neg.version), ...deprecationHeaders(neg.version), ETag: etag };
    const entry = { etag, headers, payload, json, length: Buffer.byteLength(json) };
    cache.set(key, entry);
    return entry;
  }

  /** The rest of a read once the revision is known: a cached answer at once, else one row read. */
  async function afterRevision(account: Account, q: ReadQuery, revision: number | null): Promise<ReadAnswer> {
    if (revision === null) return { status: 404 };
    const id = q.orderId;
    const neg = negotiate({ family: 'order', pathVersion: q.pathVersion, accept: q.accept, apiVersion: q.apiVersion, pinned: account.pinnedVersion });
    if (!neg.ok) return { status: 406, detail: neg.detail };
    const kind = `${neg.version}${neg.vendor ? 'n' : 'j'}:${q.pathVersion ?? 0}`;
    const entry = cache.get(`${id}:${revision}:${kind}`);
    const tag = entry?.etag ?? etagOf({ id, revision }, neg.version, neg.vendor);
    const inm = q.ifNoneMatch;
    if (inm !== undefined && evaluate({ method: 'GET', ifNoneMatch: inm, current: { selected: tag, all: noTags } }) === 'not_modified') {
      return { status: 304, etag: tag };
    }
    if (entry) return { status: 200, entry, version: neg.version };
    const order = await store.getOrder(account.id, id);
    if (!order) return { status: 404 };
    // A write may have landed in between: cache (and answer) the revision actually read.
    return { status: 200, entry: cached(order, neg, q.pathVersion, `${id}:${order.revision}:${kind}`), version: neg.version };
  }

  return {
    async decide(account, q) {
      return afterRevision(account, q, await store.orderRevision(account.id, q.orderId));
    },
    served(account, version) {
      if (version === 1) fieldReads.record(account, 'discount_code');
    },
  };
}

const baseOf = (pathVersion: ApiVersion | null) => (pathVersion ? `/v${pathVersion}/orders` : '/orders');

export function orderHandlers(deps: OrderDeps): Pick<OperationHandlers, OrderFamilies> {
  const { store, fieldReads } = deps;

  function select(req: OrderRequest, ctx: AccountContext, family: Family): Negotiated {
    return negotiate({
      family,
      pathVersion: req.pathVersion,
      accept: req.headers.Accept,
      apiVersion: req.headers['Api-Version'],
      pinned: ctx.account.pinnedVersion,
    });
  }

  /**
   * `bodyVersion`: the version whose schema read the request body, when it is not the
   * response's (readBodyAs). A client still writing a deprecated version's body is told so
   * (its Deprecation, Sunset and Link) and counted like a reader of the deprecated field, so
   * the counts that decide the version's removal include it.
   *
   * Each response's headers are one object literal, and only a deprecated version's
   * responses get its three fields added: spreading the shared blocks into every response
   * was 2 to 5 us of a create's CPU (`--cpu-prof` under wrk).
   */
  function withDeprecation<H extends Record<string, string>>(ctx: AccountContext, version: ApiVersion, bodyVersion: ApiVersion, headers: H): H {
    if (version === 1 || bodyVersion === 1) fieldReads.record(ctx.account, 'discount_code');
    const deprecated = isDeprecated(version) ? version : isDeprecated(bodyVersion) ? bodyVersion : undefined;
    return deprecated === undefined ? headers : { ...deprecationHeaders(deprecated), ...headers };
  }

  function headersFor(ctx: AccountContext, version: ApiVersion): ListHeaders {
    return withDeprecation(ctx, version, version, { 'Cache-Control': CACHE_CONTROL, Vary: VARY, 'Api-Version': String(version) });
  }

  function orderResponse(order: OrderRecord, neg: Negotiated & { ok: true }, ctx: AccountContext, base: string, bodyVersion: ApiVersion) {
    const v = neg.version;
    const headers: OrderHeaders = withDeprecation(ctx, v, bodyVersion, { 'Cache-Control': CACHE_CONTROL, Vary: VARY, 'Api-Version': String(v), ETag: etagOf(order, v, neg.vendor) });
    return { status: 200 as const, headers, ...orderPayload(order, v, neg.vendor, base) };
  }

  function createdResponse(order: OrderRecord, neg: Negotiated & { ok: true }, ctx: AccountContext, base: string, bodyVersion: ApiVersion) {
    const v = neg.version;
    const headers: OrderHeaders & { Location: string } = withDeprecation(ctx, v, bodyVersion, {
      'Cache-Control': CACHE_CONTROL,
      Vary: VARY,
      'Api-Version': String(v),
      ETag: etagOf(order, v, neg.vendor),
      Location: `${base}/${order.id}`,
    });
    return { status: 201 as const, headers, ...orderPayload(order, v, neg.vendor, base) };
  }

  const reads = deps.reads ?? orderReads(deps);
  const pages = orderPages(store);

  /** GET and HEAD: the shared decision (`orderReads`), as the family's typed responses. */
  async function read(req: H.GetOrderFamilyRequest | H.HeadOrderFamilyRequest, ctx: AccountContext) {
    const id = req.params.orderId;
    const headers: OrderRequest['headers'] & { 'If-None-Match'?: string } = req.headers;
    const answer = await reads.decide(ctx.account, { orderId: id, pathVersion: req.pathVersion, accept: headers.Accept, apiVersion: headers['Api-Version'], ifNoneMatch: headers['If-None-Match'] });
    switch (answer.status) {
      case 404:
        return fail('NOT_FOUND', `Order ${id} not found`);
      case 406:
        return fail('NOT_ACCEPTABLE', answer.detail);
      case 304:
        return { status: 304 as const, headers: notModifiedHeaders(answer.etag) };
      case 200:
        reads.served(ctx.account, answer.version);
        return { status: 200 as const, headers: answer.entry.headers, ...answer.entry.payload };
    }
  }

  async function write(req: H.ReplaceOrderFamilyRequest | H.PatchOrderFamilyRequest | H.CancelOrderFamilyRequest, ctx: AccountContext, kind: WriteKind) {
    const neg = select(req, ctx, 'order');
    if (!neg.ok) return fail('NOT_ACCEPTABLE', neg.detail);
    const version = bodyVersion(req.contentType, neg.version);
    const checked = readBodyAs(req.contentType, req.pathVersion, neg.version, (v) => writeIntent(kind, v, req.body));
    if ('bad' in checked) return checked.bad;
    const ifMatch = req.headers['If-Match'];
    const ifNoneMatch = req.headers['If-None-Match'];
    // An unquoted or otherwise unparseable tag is the client's syntax error, not a changed order.
    const malformed = malformedTagField(ifMatch, ifNoneMatch);
    if (malformed) {
      const { detail, extra } = malformedTagProblem(malformed);
      return fail('VALIDATION_FAILED', detail, extra);
    }
    const base = baseOf(req.pathVersion);
    const written = (order: OrderRecord) => orderResponse(order, neg, ctx, base, checked.intent.version);
    // With an Idempotency-Key (every write takes one) an applied write's response is stored in its own transaction.
    let res: ReturnType<typeof written> | undefined;
    const claimed = ctx.idempotency;
    const completion = claimed && { ...claimed, respond: (r: { order: OrderRecord }) => (claimed.storedByWrite(), storedResponse((res = written(r.order)))) };
    const result = await store.writeOrder<WriteRefusal>(
      ctx.account.id,
      req.params.orderId,
      (current) => {
        // On the row the write would replace: 428 and 412 see the revision that would be replaced.
        // RFC 9110 13.2.2: If-Match, then If-None-Match (`*` or a current tag: 412).
        const state = { selected: etagOf(current, version, false), all: () => allTags(current) };
        if (evaluate({ method: 'PUT', ifMatch, ifNoneMatch, current: state }) !== 'proceed') {
          // Which one failed, for the detail: If-Match (the order changed) or, If-Match holding, If-None-Match.
          return { apply: false, reason: { kind: evaluate({ method: 'PUT', ifMatch, current: state }) === 'proceed' ? 'none_matched' : 'precondition_failed' } };
        }
        // A write that passed If-None-Match alone still needs If-Match (no lost updates).
        if (ifMatch === undefined) return { apply: false, reason: { kind: 'precondition_required' } };
        const decision = decideWrite(current, checked.intent);
        if (decision.apply) return decision;
        return { apply: false, reason: decision.reason === 'conflict' ? { kind: 'conflict', detail: decision.detail } : { kind: 'unchanged', order: current } };
      },
      completion,
    );
    if (!result.ok) {
      if (result.reason === 'not_found') return fail('NOT_FOUND', `Order ${req.params.orderId} not found`);
      switch (result.reason.kind) {
        case 'precondition_required':
          return fail('PRECONDITION_REQUIRED', 'Send If-Match with the ETag you last saw');
        case 'precondition_failed':
          return fail('PRECONDITION_FAILED', 'The order changed since that ETag: reload it and reapply your change');
        case 'none_matched':
          return fail('PRECONDITION_FAILED', 'If-None-Match names the order as it stands (* names any state): nothing was written');
        case 'conflict':
          return fail('CONFLICT', result.reason.detail);
        case 'unchanged':
          return written(result.reason.order);
      }
    }
    deps.onEvent?.(result.event);
    return res ?? written(result.order);
  }

  return {
    async listOrders(req, ctx) {
      const neg = select(req, ctx, 'order-list');
      if (!neg.ok) return fail('NOT_ACCEPTABLE', neg.detail);
      let after = 0;
      if (req.query.page !== undefined) {
        const decoded = decodeCursor(req.query.page);
        if (decoded === null) return fail('BAD_CURSOR', 'The page cursor is not in the form this service writes; follow _links.next');
        after = decoded;
      }
      const base = baseOf(req.pathVersion);
      // The contract's default when the client gave none (the binding fills it in).
      const limit = req.query.limit;
      // No escaping needed: a cursor is base64url (the contract's pattern for `page` says so too) and a limit digits.
      // `self` names the page with its size, as `next` does.
      const self = req.query.page === undefined ? `${base}?limit=${limit}` : `${base}?page=${req.query.page}&limit=${limit}`;
      const links = (lastId: number | undefined, hasMore: boolean): Links => {
        const l: Links = { self: { href: self } };
        if (hasMore && lastId !== undefined) l.next = { href: `${base}?page=${encodeCursor(lastId)}&limit=${limit}` };
        return l;
      };
      const q = { after, limit, base, links };
      switch (neg.version) {
        case 1: {
          const body = await pages.v1(ctx.account.id, q);
          const headers = headersFor(ctx, neg.version);
          return neg.vendor ? { status: 200, headers, contentType: `${VENDOR['order-list']}; version=1`, body } : { status: 200, headers, contentType: 'application/json', body };
        }
        case 2: {
          const body = await pages.v2(ctx.account.id, q);
          const headers = headersFor(ctx, neg.version);
          return neg.vendor ? { status: 200, headers, contentType: `${VENDOR['order-list']}; version=2`, body } : { status: 200, headers, contentType: 'application/json', body };
        }
      }
    },

    async createOrder(req, ctx) {
      const neg = select(req, ctx, 'order');
      if (!neg.ok) return fail('NOT_ACCEPTABLE', neg.detail);
      const checked = readBodyAs(req.contentType, req.pathVersion, neg.version, (version) => createIntent(version, req.body));
      if ('bad' in checked) return checked.bad;
      const base = baseOf(req.pathVersion);
      const created = (order: OrderRecord) => createdResponse(order, neg, ctx, base, checked.intent.version);
      // With an Idempotency-Key the response is built inside the create's transaction and stored with it.
      let res: ReturnType<typeof created> | undefined;
      const claimed = ctx.idempotency;
      const { order, event } = await store.createOrder(ctx.account.id, createFields(checked.intent), claimed && { ...claimed, respond: (r) => (claimed.storedByWrite(), storedResponse((res = created(r.order)))) });
      deps.onEvent?.(event);
      return res ?? created(order);
    },

    getOrder: read,

    /** HEAD: GET's status and headers (Content-Type and Content-Length included), no body (the contract declares none). */
    async headOrder(req, ctx) {
      const res = await read(req, ctx);
      if (res.status === 200) {
        const json = serialized.get(res.body) ?? JSON.stringify(res.body);
        const headers = { ...res.headers, 'Content-Type': res.contentType, 'Content-Length': String(Buffer.byteLength(json)) };
        return { status: res.status, headers };
      }
      if (res.status === 304) return res;
      // The problem GET would send: its type and true length, no body (RFC 9110 9.3.2: HEAD never states a false length).
      return { status: res.status, headers: { 'Content-Type': res.contentType, 'Content-Length': String(Buffer.byteLength(JSON.stringify(res.body))) } };
    },

    replaceOrder: (req, ctx) => write(req, ctx, 'replace'),
    patchOrder: (req, ctx) => write(req, ctx, 'patch'),
    cancelOrder: (req, ctx) => write(req, ctx, 'cancel'),
  };
}
