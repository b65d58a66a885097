/**
 * Type-level tests of the SDK's public types, checked by test/sdkTypes.test.ts with the
 * SDK's strict settings: every line marked `@ts-expect-error` must fail to compile
 * (an unused directive is itself an error), everything else must compile.
 */
import {
  createGraphqlClient,
  createOrderlineClient,
  streamOrder,
  type OrderlineError,
  type OrderEventMessage,
  type Order,
  type OrderStatus,
  type Currency,
  type ProblemCode,
  type OrderlineErrorCode,
} from '../../src/index.js';
import type * as messages from '../../src/generated/messages.js';
import type { RealtimeErrorCode, ResyncMessageReason, ServerMessage } from '../../src/realtime.js';

/** True when A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectTrue = <T extends true>(): T => true as T;

export async function writes(): Promise<void> {
  const { api } = createOrderlineClient({ baseUrl: 'http://x.test' });
  const path = { orderId: 1 };
  const etag = '"1-1-v2"';
  await api.PATCH('/v2/orders/{orderId}', { params: { path, header: { 'If-Match': etag } }, body: { note: 'n' } });
  // @ts-expect-error PATCH without If-Match (the server answers 428)
  await api.PATCH('/v2/orders/{orderId}', { params: { path }, body: { note: 'n' } });
  // @ts-expect-error PATCH without If-Match, v1
  await api.PATCH('/v1/orders/{orderId}', { params: { path }, body: { note: 'n' } });
  // @ts-expect-error PUT without If-Match
  await api.PUT('/v2/orders/{orderId}', { params: { path }, body: { status: 'pending', items: [], currency: 'EUR', discount: null, note: null } });
  // @ts-expect-error cancel without If-Match
  await api.POST('/v2/orders/{orderId}/cancel', { params: { path } });
  await api.POST('/v2/orders/{orderId}/cancel', { params: { path, header: { 'If-Match': etag } } });
  // A create needs none.
  await api.POST('/v2/orders', { body: {} });
  // Every call takes a signal.
  await api.GET('/v2/orders/{orderId}', { params: { path }, signal: AbortSignal.timeout(1000) });
}

export function openSets(order: Order): void {
  // Known values autocomplete (they are members of the type), unknown ones still compile.
  expectTrue<Equal<Extract<OrderStatus, 'pending'>, 'pending'>>();
  expectTrue<Equal<Extract<Currency, 'EUR'>, 'EUR'>>();
  expectTrue<Equal<Extract<ProblemCode, 'PRECONDITION_REQUIRED'>, 'PRECONDITION_REQUIRED'>>();
  expectTrue<Equal<Extract<OrderlineErrorCode, 'UNAUTHENTICATED'>, 'UNAUTHENTICATED'>>();
  const later: OrderStatus = 'refunded';
  const status: OrderStatus = order.status;
  void [later, status];
  // @ts-expect-error a status is a string
  const notAString: OrderStatus = 3;
  void notAString;
}

export function realtimeOpenSets(): void {
  // The realtime contract's open sets: an `error` code or a `resync` reason added later still compiles.
  expectTrue<Equal<Extract<RealtimeErrorCode, 'not_found'>, 'not_found'>>();
  expectTrue<Equal<Extract<ResyncMessageReason, 'gap_too_old'>, 'gap_too_old'>>();
  const refused: ServerMessage = { type: 'error', channel: null, seq: null, code: 'over_quota', message: 'm' };
  const resync: ServerMessage = { type: 'resync', channel: 'order:1', seq: 1, reason: 'restored' };
  const code: RealtimeErrorCode = 'over_quota';
  void [refused, resync, code];
  // @ts-expect-error a code is a string
  const notAString: RealtimeErrorCode = 3;
  void notAString;
}

export function errors(err: OrderlineError): void {
  expectTrue<Equal<typeof err.status, number>>();
  const code: OrderlineErrorCode | undefined = err.code;
  const requestId: string | undefined = err.requestId;
  void [code, requestId, err.problem?.code, err.errors];
}

export function events(): void {
  // An event carries the same Order as the REST client.
  expectTrue<Equal<OrderEventMessage['order'], Order>>();
  // No token: the same option as the REST client's.
  const stream = streamOrder({ baseUrl: 'http://x.test', orderId: 1, transport: 'sse', onEvent: () => undefined, token: () => Promise.resolve('t'), signal: new AbortController().signal });
  stream.close();
  // onFatal receives the one error type.
  streamOrder({ baseUrl: 'http://x.test', orderId: 1, transport: 'sse', onEvent: () => undefined, onFatal: (e: OrderlineError) => void e.status });
}

export async function strictOptionals(saved: number | undefined, signal: AbortSignal | undefined): Promise<void> {
  // Under exactOptionalPropertyTypes an optional value that may be undefined is passed as is.
  streamOrder({ baseUrl: 'http://x.test', orderId: 1, transport: 'ws', since: saved, signal, idleTimeoutMs: undefined, onEvent: () => undefined });
  const gql = createGraphqlClient({ baseUrl: 'http://x.test', token: 't' });
  gql.subscribe('OrderEventsV2', { id: '1', since: saved }, { next: () => undefined }).close();
  await gql.query('ViewerOrdersV2', { first: saved });
  // @ts-expect-error a subscription is served over WebSocket only: subscribe's, not query's
  await gql.query('OrderEventsV2', { id: '1' });
}

// The messages module exports message types only.
// @ts-expect-error no `paths` in messages
export type NoPaths = messages.paths;
