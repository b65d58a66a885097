/**
 * The REST binding of the generated route table: each operation's request read off the
 * wire (`readRequest`: path, query and header parameters, the body by media type), then
 * validated and typed by the generated binding (bind.ts: the validators are type guards),
 * then handed to its family's handler. Refusals are values (a 400, 413 or 415 problem);
 * nothing here writes a response: the pipeline (http/pipeline.ts) does.
 */
import type { IncomingMessage } from 'node:http';
import { bindOperations, type AnyResponse, type Bound, type Invalid, type RawRequest } from '../../../generated/openapi/bind';
import { FAMILIES, type Handlers } from '../../../generated/openapi/handlers';
import { routes, type RouteSpec } from '../../../generated/openapi/routes';
import type { Account } from '../../store';
import { parseCanonicalInteger } from '../../orders';
import { baseMediaType, dropRequestBody, readJsonBody, sendsBody } from '../body';
import { readsAsUtf8, versionOf } from '../mediaType';
import { isRefusal, problem, PROBLEM_MEDIA_TYPE, refusal, type Refusal } from '../problem';
import { readQuery } from '../query';
import { fieldErrors } from './fieldErrors';
import { acceptsType } from './negotiate';
import { idempotent, IDEMPOTENCY_KEY_HEADER, type IdempotencyOptions } from './idempotency';

/** What every handler receives besides its typed request. */
export interface HandlerContext {
  method: string;
  /** The request path (no query). */
  path: string;
}

/** What a handler of an operation that requires a bearer token receives. */
export interface AccountContext extends HandlerContext {
  /** The authenticated caller. */
  account: Account;
  /**
   * The claimed Idempotency-Key (idempotency.ts): the handler's write may store its response with
   * it, in its own transaction (the store's completion), and then calls `storedByWrite` from the
   * completion's `respond`, so that the key is not completed a second time after the handler.
   */
  idempotency?: { key: string; token: string; storedByWrite(): void };
}

export type OperationHandlers = Handlers<HandlerContext, AccountContext>;

/** The generated binding's report of a request the contract refuses: a 400 problem, as the operation's response. */
const invalid: Invalid = (where, errors) => {
  const listed = fieldErrors(where, errors);
  // A parameter is named in the detail too (`Invalid header parameter If-Match`): its pointer is `header:If-Match`.
  const names = [...new Set(listed.map((e) => e.pointer.slice(where.length + 1)).filter((n) => n !== ''))];
  const detail = where === 'body' ? 'Invalid request body' : `Invalid ${where} parameter${names.length > 0 ? ` ${names.join(', ')}` : ''}`;
  return Promise.resolve({ status: 400, contentType: PROBLEM_MEDIA_TYPE, body: problem('VALIDATION_FAILED', detail, { errors: listed }) });
};

/**
 * The contract key of a request media type: the base type, plus `; version=N` when a
 * version (or its synonym `v`) parameter is given, as the contract spells its keys.
 */
export function contractMediaType(value: string | undefined): string {
  const base = baseMediaType(value);
  const v = value ? versionOf(value) : undefined;
  return v === undefined ? base : `${base}; version=${v}`;
}

/** An integer parameter's text: the service's one reading of integers (orders/orderId.ts `parseCanonicalInteger`). */
const isCanonicalInteger = (v: string) => parseCanonicalInteger(v) !== null;

/** One operation, ready to serve: its route, its header parameters' wire names, its bound handler. */
export type Operation = {
  spec: RouteSpec;
  headers: readonly (readonly [string, string])[];
  /** A write that judges If-Match and If-None-Match in its handler (it declares If-Match); any other write has the pipeline judge them (conditional.ts `writeWithoutTags`). */
  ownPreconditions: boolean;
  /**
   * The one media type its success responses declare, when it declares `Accept`: the pipeline
   * answers 406 to an Accept that admits it not (acceptableTo). An operation whose successes
   * declare several (the order operations' vendor versions) negotiates among them in its handler.
   */
  offers: string | undefined;
} & ({ auth: true; run: Bound<AccountContext> } | { auth: false; run: Bound<HandlerContext> });

export interface OperationOptions {
  /** Idempotency-Key on the operations that take it (idempotency.ts). */
  idempotency: IdempotencyOptions;
}

/** The media type every success response of the route declares, when they declare one and the same (undefined otherwise). */
function onlySuccessType(spec: RouteSpec): string | undefined {
  return spec.successTypes.length === 1 ? spec.successTypes[0] : undefined;
}

/** 406 for an operation that offers one media type (`offers`) to an Accept that admits it not (RFC 9110 12.5.1); undefined when it does, or when the operation negotiates itself. */
export function acceptableTo(req: IncomingMessage, op: Operation): Refusal | undefined {
  if (op.offers === undefined || acceptsType(req.headers.accept, op.offers)) return undefined;
  return refusal('NOT_ACCEPTABLE', `This operation answers ${op.offers}: Accept must admit it`);
}

/**
 * Whether the request breaks its operation's contract (a parameter or the body its schema
 * refuses): the generated binding then answers it 400. The pipeline's own refusals that come
 * before the binding (the 406 of `acceptableTo`, a tag-less write's 412) yield to that 400, so
 * a request is told what is wrong with it first, as the operations that negotiate in their
 * handler tell it. Asked only of a request already refused, so a valid one is validated once;
 * and of a request that sends an Idempotency-Key, which only a request its contract takes claims.
 */
export function breaksContract(spec: RouteSpec, raw: RawRequest): boolean {
  const { validate, body } = spec;
  if ((validate.path && !validate.path(raw.params)) || (validate.query && !validate.query(raw.query)) || (validate.header && !validate.header(raw.headers))) return true;
  const schema = body && raw.contentType !== undefined ? body.contentTypes[raw.contentType] : undefined;
  return schema !== undefined && !schema(raw.body);
}

/** Every operation of the route table bound to its handler, keyed by route: built once. */
export function bindRoutes(handlers: OperationHandlers, opts: OperationOptions): Map<RouteSpec, Operation> {
  // The compiler names at most four missing handlers, and a build that failed may still have
  // been run: every operation without one is named here, at start, rather than answered 500.
  const missing = FAMILIES.filter((name) => typeof handlers[name] !== 'function');
  if (missing.length > 0) throw new Error(`no handler for ${missing.length} contract operation(s): ${missing.join(', ')} (their handlers are missing from restOperations in src/http/rest/index.ts)`);
  const table = bindOperations(handlers, invalid);
  const out = new Map<RouteSpec, Operation>();
  for (const spec of routes) {
    const headers = spec.headerNames.map((n) => [n, n.toLowerCase()] as const);
    const ownPreconditions = spec.headerNames.includes('If-Match');
    const offers = spec.headerNames.includes('Accept') ? onlySuccessType(spec) : undefined;
    if (spec.auth) {
      const bound = table[spec.operationId];
      out.set(spec, { spec, headers, ownPreconditions, offers, auth: true, run: spec.headerNames.includes(IDEMPOTENCY_KEY_HEADER) ? idempotent(bound, opts.idempotency, (raw) => breaksContract(spec, raw)) : bound });
    } else {
      out.set(spec, { spec, headers, ownPreconditions, offers, auth: false, run: table[spec.operationId] });
    }
  }
  return out;
}

/** A path segment percent-decoded (`%31` is `1`, RFC 3986 6.2.2.2), as every route reads its parameters; invalid encoding is left as sent, for the validator to refuse. */
export const decodePathSegment = (s: string): string => {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s; // not valid percent-encoding: left as sent, the validator refuses it
  }
};

function integerRefusal(where: string, name: string): Refusal {
  return refusal('VALIDATION_FAILED', `Invalid ${where} parameter ${name}`, undefined, {
    errors: [{ pointer: `${where}:${name}`, rule: 'integer', message: 'must be an integer in canonical decimal form (no sign +, no leading zero), from -(2^53-1) to 2^53-1' }],
  });
}

function integerRefused(values: Record<string, unknown>, name: string): boolean {
  const v = values[name];
  if (v === undefined) return false;
  // Each item of a query array of integers too (`?seq=1&seq=0x10`).
  if (Array.isArray(v)) return v.some((item) => typeof item !== 'string' || !isCanonicalInteger(item));
  return typeof v !== 'string' || !isCanonicalInteger(v);
}

/**
 * Reads the request's parameters off the wire (synchronously: a request without a body
 * waits for nothing here); validation is the generated binding's (bind.ts).
 */
export function readParameters(req: IncomingMessage, op: Operation, path: Record<string, string>, search: string): RawRequest | Refusal {
  const { spec } = op;
  const params: Record<string, unknown> = {};
  for (const name in path) params[name] = decodePathSegment(path[name]);
  // Only the declared parameters reach the handler, as only declared headers do: an undeclared one (`?utm_source=x`) is ignored, not refused.
  const query: Record<string, unknown> = {};
  if (spec.validate.query && search !== '') {
    const sent = readQuery(search);
    if (isRefusal(sent)) return sent;
    for (const name of spec.singleQueryParams) if (sent[name] !== undefined) query[name] = sent[name];
    // `?tag=a` is a list of one where the contract says array (querystring gives a list only for a repeated name).
    for (const name of spec.arrayQueryParams) if (sent[name] !== undefined) query[name] = typeof sent[name] === 'string' ? [sent[name]] : sent[name];
  }
  const headers: Record<string, unknown> = {};
  for (const [name, wire] of op.headers) {
    // Sent empty is not absent: the contract's schema judges '' (an empty Idempotency-Key or Api-Version is a 400).
    const v = req.headers[wire];
    if (typeof v === 'string') headers[name] = v;
  }
  for (const name of spec.singleQueryParams) {
    // A parameter that is not an array, given twice: which one was meant is not for the server to guess.
    if (Array.isArray(query[name])) return refusal('VALIDATION_FAILED', `Invalid query parameter ${name}`, undefined, { errors: [{ pointer: `query:${name}`, rule: 'once', message: 'may be given once' }] });
  }
  for (const name of spec.integerParams) {
    if (integerRefused(params, name)) return integerRefusal('path', name);
    if (integerRefused(query, name)) return integerRefusal('query', name);
    if (integerRefused(headers, name)) return integerRefusal('header', name);
  }
  return { params, query, headers };
}

/** The media types an operation's body may have, as `Accept-Patch` lists them (RFC 5789 3.1): a PATCH's 415, and OPTIONS on its path. */
export const bodyMediaTypes = (spec: RouteSpec): string => Object.keys(spec.body?.contentTypes ?? {}).join(', ');

/** Reads the body of an operation that declares one: its media type (415), then the JSON (413, 400). */
export async function readBody(req: IncomingMessage, op: Operation, raw: RawRequest, bodyLimit: number): Promise<RawRequest | Refusal> {
  const declared = op.spec.body;
  const hasBody = sendsBody(req);
  // A body sent to an operation that takes none is read (and dropped) before it runs: body.ts dropRequestBody.
  if (!declared) return hasBody ? ((await dropRequestBody(req, bodyLimit)) ?? raw) : raw;
  if (!hasBody && !declared.required) return raw;
  const contentType = contractMediaType(req.headers['content-type']);
  if (!declared.contentTypes[contentType]) {
    const accepted = bodyMediaTypes(op.spec);
    // RFC 5789 3.1: Accept-Patch belongs to a resource's PATCH; POST and PUT send none.
    return refusal('UNSUPPORTED_MEDIA_TYPE', `Content-Type must be one of: ${accepted}`, op.spec.method === 'PATCH' ? { 'Accept-Patch': accepted } : {});
  }
  if (!readsAsUtf8(req.headers['content-type'])) return refusal('UNSUPPORTED_MEDIA_TYPE', 'A JSON body is UTF-8 (RFC 8259 8.1): send no charset, or charset=utf-8');
  const body = await readJsonBody(req, bodyLimit);
  if (isRefusal(body)) return body;
  raw.body = body.json;
  raw.contentType = contentType;
  return raw;
}

export type { AnyResponse };
