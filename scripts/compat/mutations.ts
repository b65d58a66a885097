/**
 * The gate's mutation corpus: small edits of the current contracts, each with the
 * verdict the gate must give and words its report must contain. corpus.test.ts runs
 * every one in a temp dir whose `contracts/released/` is the unmutated contracts.
 *
 * A mutation edits parsed YAML (the `yaml` package) or SDL / operation text. Breaking
 * ones name the field the report must name; compatible ones are the additive changes
 * the versioning workflow relies on (README "Versioning workflow").
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { CONTRACT_FILES } from '../release';
import type { Kind } from './types';

/** Parsed YAML: mutations reach into it freely, a wrong path throws and fails the case. */
type Doc = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed YAML: mutations reach into it freely

export interface Contracts {
  openapi: Doc;
  asyncapi: Doc;
  schema: string;
  /** File name -> text. */
  operations: Record<string, string>;
  /** contracts/compat-accepted.yaml text; undefined = the repo's file. */
  accepted?: string;
}

export interface Mutation {
  name: string;
  expect: 'breaking' | 'compatible';
  /** For breaking ones: the kinds that must report it, and words each report line set must contain. */
  kinds?: Kind[];
  mentions?: string[];
  /** For breaking ones: the report's breaking changes (report.ts `groupByCause` titles), when the case pins them. */
  causes?: string[];
  apply(c: Contracts): void;
}

const schemas = (c: Contracts) => c.openapi.components.schemas;
const payload = (c: Contracts, message: string) => c.asyncapi.components.messages[message].payload;
const dropRequired = (schema: Doc, field: string) => {
  delete schema.properties[field];
  schema.required = (schema.required ?? []).filter((f: string) => f !== field);
};
/** Replaces `from` in the SDL, failing loudly when the SDL no longer has it (a stale mutation). */
const sdl = (c: Contracts, from: string, to: string) => {
  if (!c.schema.includes(from)) throw new Error(`mutation: schema.graphql has no ${JSON.stringify(from)}`);
  c.schema = c.schema.replace(from, to);
};

export const BREAKING: Mutation[] = [
  // --- OpenAPI -------------------------------------------------------------
  {
    name: 'openapi: field removed from the OrderV1 response',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['REST v1', 'GET /v1/orders/{orderId}', '`note`'],
    causes: ['`OrderV1.note` removed'],
    apply: (c) => dropRequired(schemas(c).OrderV1, 'note'),
  },
  {
    name: 'openapi: field removed from the OrderV2 response',
    expect: 'breaking',
    kinds: ['openapi', 'asyncapi'],
    mentions: ['REST v2', 'GET /v2/orders/{orderId}', '`discount`'],
    apply: (c) => dropRequired(schemas(c).OrderV2, 'discount'),
  },
  {
    name: 'openapi: response field retyped (total_cents integer -> string)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['total_cents'],
    apply: (c) => {
      schemas(c).OrderV2.properties.total_cents = { type: 'string' };
    },
  },
  {
    name: 'openapi: an error status replaced (PATCH answers 409 where it answered 412; INFO in oasdiff, raised)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['PATCH /v2/orders/{orderId}', '412', 'response-non-success-status-removed'],
    apply: (c) => {
      const responses = c.openapi.paths['/v2/orders/{orderId}'].patch.responses;
      responses['409'] = responses['412'];
      delete responses['412'];
    },
  },
  {
    name: "openapi: a branch added to a response's anyOf (a v3 list on /orders; INFO in oasdiff, raised)",
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['GET /orders', 'response-body-any-of-added'],
    apply: (c) => {
      schemas(c).OrderListV3 = { type: 'object', required: ['items'], properties: { items: { type: 'array', items: { type: 'string' } } } };
      c.openapi.paths['/orders'].get.responses['200'].content['application/json'].schema.anyOf.push({ $ref: '#/components/schemas/OrderListV3' });
    },
  },
  {
    name: 'openapi: optional response field removed (only a WARN in oasdiff)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['cancel', 'response-optional-property-removed'],
    apply: (c) => {
      delete schemas(c).OrderLinks.properties.cancel;
    },
  },
  {
    name: 'openapi: operation removed (POST /v1/orders/{orderId}/cancel)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['/v1/orders/{orderId}/cancel'],
    apply: (c) => {
      delete c.openapi.paths['/v1/orders/{orderId}/cancel'];
    },
  },
  {
    name: 'openapi: request field made required (OrderCreateV2.currency)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['POST /v2/orders', 'currency'],
    apply: (c) => {
      schemas(c).OrderCreateV2.required = ['currency'];
    },
  },
  {
    name: 'openapi: request field range narrowed (OrderItem.quantity maximum)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['quantity'],
    apply: (c) => {
      schemas(c).OrderItem.properties.quantity.maximum = 10;
    },
  },
  {
    name: 'openapi: new required query parameter',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['GET /v2/orders', 'region'],
    apply: (c) => {
      c.openapi.paths['/v2/orders'].get.parameters.push({ name: 'region', in: 'query', required: true, schema: { type: 'string' } });
    },
  },
  {
    name: 'openapi: vendor media type version=1 removed from a negotiated response',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['GET /orders/{orderId}', 'version=1'],
    apply: (c) => {
      delete c.openapi.paths['/orders/{orderId}'].get.responses['200'].content['application/vnd.orderline.order+json; version=1'];
    },
  },
  {
    // oasdiff pairs the two as one media type modified and fires no rule: requestMediaTypes.ts.
    name: 'openapi: a request media type renamed (merge-patch+json to json): released clients get 415',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['PATCH /v2/orders/{orderId}', 'application/merge-patch+json', '415'],
    causes: ['PATCH /v2/orders/{orderId}: request media type `application/merge-patch+json` removed or renamed'],
    apply: (c) => {
      const content = c.openapi.paths['/v2/orders/{orderId}'].patch.requestBody.content;
      content['application/json'] = content['application/merge-patch+json'];
      delete content['application/merge-patch+json'];
    },
  },
  {
    name: 'openapi: a request media type removed beside another: reported once',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['POST /orders'],
    causes: ['`#/paths/~1orders/post/requestBody/content/application~1vnd.orderline.order+json; version=1` removed'],
    apply: (c) => {
      const content = c.openapi.paths['/orders'].post.requestBody.content;
      delete content[Object.keys(content)[1]];
    },
  },
  {
    name: 'openapi: Sunset header removed from a deprecated v1 response (a WARN)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['REST v1', 'GET /v1/orders/{orderId}', '`Sunset`'],
    apply: (c) => {
      delete c.openapi.paths['/v1/orders/{orderId}'].get.responses['200'].headers.Sunset;
    },
  },
  // --- AsyncAPI ------------------------------------------------------------
  {
    name: 'openapi: an anonymous operation now needs the token (/healthz loses its security: [])',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['GET /healthz', 'security-tightened', 'no credentials'],
    causes: ['security of GET /healthz tightened'],
    apply: (c) => {
      c.openapi.paths['/healthz'].get.security = [{ bearerAuth: [] }];
    },
  },
  {
    name: 'openapi: the bearer scheme redefined as an API key header',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['GET /v2/orders/{orderId}', 'bearerAuth redefined', 'type: "http" -> "apiKey"'],
    causes: ['security scheme `bearerAuth` redefined'],
    apply: (c) => {
      c.openapi.components.securitySchemes.bearerAuth = { type: 'apiKey', in: 'header', name: 'X-Api-Key' };
    },
  },
  {
    name: 'openapi: a scope added to the document-wide requirement',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['scopes orders:write'],
    causes: ['the document-wide security tightened'],
    apply: (c) => {
      c.openapi.security = [{ bearerAuth: ['orders:write'] }];
    },
  },
  {
    name: "asyncapi: the access_token query parameter renamed (browsers' credential)",
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['accessToken redefined', 'name: "access_token" -> "token"'],
    causes: ['security scheme `accessToken` redefined'],
    apply: (c) => {
      c.asyncapi.components.securitySchemes.accessToken.name = 'token';
    },
  },
  {
    name: 'openapi: the newest version changed (x-api-versions reversed: unpinned clients get v1)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['api-version-newest-changed', 'from 2 to 1'],
    apply: (c) => {
      c.openapi.info['x-api-versions'].reverse();
    },
  },
  {
    // Version 2 (no sunset announced, so never past it): the verdict does not depend on today's date.
    name: 'openapi: a version dropped from x-api-versions with no sunset announced',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['api-version-removed-before-sunset', 'version 2', 'none announced'],
    apply: (c) => {
      c.openapi.info['x-api-versions'] = c.openapi.info['x-api-versions'].filter((v: Doc) => v.version !== 2);
    },
  },
  {
    name: "openapi: version 1's sunset moved earlier",
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['api-version-sunset-earlier'],
    apply: (c) => {
      c.openapi.info['x-api-versions'][0].sunset = '2026-12-01T00:00:00Z';
    },
  },
  {
    name: "openapi: a deprecated operation's x-sunset moved earlier",
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['api-operation-sunset-earlier', 'GET /v1/orders'],
    apply: (c) => {
      c.openapi.paths['/v1/orders'].get['x-sunset'] = '2026-12-01';
    },
  },
  {
    name: 'openapi: a response value lost its minimum (OrderV2.total_cents)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['response-property-range-unset', 'total_cents'],
    apply: (c) => {
      delete schemas(c).OrderV2.properties.total_cents.minimum;
    },
  },
  {
    name: 'asyncapi: a message value lost its minimum (OrderEventMessage.seq)',
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['seq'],
    apply: (c) => {
      delete c.asyncapi.components.messages.OrderEventMessage.payload.properties.seq.minimum;
    },
  },
  {
    name: 'asyncapi: a close code renumbered (1013 to 4013 on /orders)',
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['close-code-removed', '1013'],
    apply: (c) => {
      const codes = c.asyncapi.channels.orders['x-close-codes'];
      codes['4013'] = codes['1013'];
      delete codes['1013'];
    },
  },
  {
    name: 'asyncapi: channel removed (orderStream, with its operation)',
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['orderStream', 'receiveOrderStream'],
    apply: (c) => {
      delete c.asyncapi.channels.orderStream;
      delete c.asyncapi.operations.receiveOrderStream;
    },
  },
  {
    name: 'asyncapi: message removed from a channel and its operation',
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['channel orders', 'message error'],
    apply: (c) => {
      delete c.asyncapi.channels.orders.messages.error;
      const op = c.asyncapi.operations.receiveOrders;
      op.messages = op.messages.filter((m: Doc) => !String(m.$ref).endsWith('/error'));
    },
  },
  {
    name: 'asyncapi: channel address changed',
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['channel orders', 'address', '/ws/orders'],
    apply: (c) => {
      c.asyncapi.channels.orders.address = '/ws/orders';
    },
  },
  {
    name: 'asyncapi: operation moved to another channel (receiveOrderStream: SSE -> WebSocket)',
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['operation receiveOrderStream', '/api/orders/{orderId}/stream'],
    apply: (c) => {
      const op = c.asyncapi.operations.receiveOrderStream;
      op.channel = { $ref: '#/channels/orders' };
      op.messages = [{ $ref: '#/channels/orders/messages/orderEvent' }, { $ref: '#/channels/orders/messages/resync' }];
    },
  },
  {
    name: 'asyncapi: WebSocket handshake query parameter removed (since)',
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['channel orders (WebSocket handshake query)', '`since`'],
    apply: (c) => {
      delete c.asyncapi.channels.orders.bindings.ws.query.properties.since;
    },
  },
  {
    name: 'asyncapi: operation removed (sendSubscription)',
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['sendSubscription'],
    apply: (c) => {
      delete c.asyncapi.operations.sendSubscription;
    },
  },
  {
    name: 'asyncapi: payload field removed from a server message (ResyncMessage.reason)',
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['message ResyncMessage', '`reason`'],
    apply: (c) => dropRequired(payload(c, 'ResyncMessage'), 'reason'),
  },
  {
    name: "asyncapi: a server message's enum dropped (OrderEventMessage.type: any string may come; oasdiff fails one value added, not this)",
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['message OrderEventMessage', '`type`'],
    apply: (c) => {
      delete payload(c, 'OrderEventMessage').properties.type.enum;
    },
  },
  {
    name: "asyncapi: a value dropped from a server message's open set (ResyncMessage.reason since_ahead: clients act on it)",
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['`since_ahead`', 'x-extensible-enum'],
    causes: ['`ResyncMessage.payload.reason` lost enum values'],
    apply: (c) => {
      const reason = payload(c, 'ResyncMessage').properties.reason;
      reason['x-extensible-enum'] = reason['x-extensible-enum'].filter((v: string) => v !== 'since_ahead');
    },
  },
  {
    name: 'openapi: maxItems lowered on a create body (an order of 11 to 100 items refused; oasdiff does not compare it)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['POST /v2/orders', 'maxItems'],
    apply: (c) => {
      schemas(c).OrderCreateV2.properties.items.maxItems = 10;
    },
  },
  {
    name: 'asyncapi: payload field retyped (OrderEventMessage.seq integer -> string)',
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['message OrderEventMessage', 'seq'],
    apply: (c) => {
      payload(c, 'OrderEventMessage').properties.seq = { type: 'string' };
    },
  },
  {
    name: 'asyncapi: client message field made required (SubscribeMessage.since)',
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['message SubscribeMessage', 'since'],
    apply: (c) => {
      payload(c, 'SubscribeMessage').required.push('since');
    },
  },
  {
    name: 'asyncapi: new enum value in a server message (oasdiff WARN: clients switch on `type`)',
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['message OrderEventMessage', 'order.refunded'],
    apply: (c) => {
      payload(c, 'OrderEventMessage').properties.type.enum.push('order.refunded');
    },
  },
  {
    name: 'asyncapi: payload field removed through the $ref into openapi.yaml (OrderV2.note)',
    expect: 'breaking',
    kinds: ['openapi', 'asyncapi'],
    mentions: ['message OrderEventMessage', 'order/note'],
    // One change: every operation and media type returning OrderV2, and the message embedding it, under it.
    causes: ['`OrderV2.note` removed'],
    apply: (c) => dropRequired(schemas(c).OrderV2, 'note'),
  },
  // --- GraphQL -------------------------------------------------------------
  {
    name: 'graphql: field removed (Order.note)',
    expect: 'breaking',
    kinds: ['graphql', 'operations'],
    mentions: ['Order.note', "Field 'note' was removed from object type 'Order'"],
    causes: ['`Order.note` removed'],
    apply: (c) => sdl(c, '  note: String\n', ''),
  },
  {
    name: 'graphql: argument made non-null (User.friends(first: Int!))',
    expect: 'breaking',
    kinds: ['graphql'],
    mentions: ['User.friends.first', "'Int' to 'Int!'"],
    apply: (c) => sdl(c, 'friends(first: Int)', 'friends(first: Int!)'),
  },
  {
    name: 'graphql: field type changed (Order.totalCents Int! -> Float!)',
    expect: 'breaking',
    kinds: ['graphql'],
    mentions: ['Order.totalCents', "'Int!' to 'Float!'"],
    apply: (c) => sdl(c, 'totalCents: Int!', 'totalCents: Float!'),
  },
  {
    name: 'graphql: output field made nullable (Order.status String! -> String)',
    expect: 'breaking',
    kinds: ['graphql'],
    mentions: ['Order.status'],
    apply: (c) => sdl(c, '  status: String!\n', '  status: String\n'),
  },
  {
    name: 'graphql: required argument added (Query.order(account: ID!))',
    expect: 'breaking',
    kinds: ['graphql', 'operations'],
    mentions: ['Query.order.account', 'operation Order'],
    apply: (c) => sdl(c, 'order(id: ID!): Order', 'order(id: ID!, account: ID!): Order'),
  },
  {
    name: 'graphql: type removed (Discount, with Order.discount)',
    expect: 'breaking',
    kinds: ['graphql'],
    mentions: ["Type 'Discount' was removed", 'Order.discount'],
    apply: (c) => {
      sdl(c, '  discount: Discount\n', '');
      sdl(c, 'type Discount {\n  code: String!\n  percent: Int!\n}\n', '');
    },
  },
  {
    name: 'graphql: DANGEROUS change not accepted (argument default added to User.friends)',
    expect: 'breaking',
    kinds: ['graphql'],
    mentions: ['User.friends.first', 'dangerous'],
    apply: (c) => sdl(c, 'friends(first: Int)', 'friends(first: Int = 10)'),
  },
  // --- persisted operations --------------------------------------------------
  {
    name: 'operations: released operation removed (User.graphql)',
    expect: 'breaking',
    kinds: ['operations'],
    mentions: ['operation User (User.graphql', 'removed'],
    apply: (c) => {
      delete c.operations['User.graphql'];
    },
  },
  {
    name: 'operations: released operation changed (Order.graphql drops `note`)',
    expect: 'breaking',
    kinds: ['operations'],
    mentions: ['operation Order (Order.graphql', 'changed'],
    apply: (c) => {
      c.operations['Order.graphql'] = c.operations['Order.graphql'].replace(/\n\s*note\n/, '\n');
    },
  },
  {
    name: 'operations: released operation no longer validates (Query.viewer removed)',
    expect: 'breaking',
    kinds: ['graphql', 'operations'],
    mentions: ['operation ViewerOrders', 'viewer'],
    apply: (c) => {
      c.schema = c.schema.replace(/\n\s*"[^"\n]*"\n\s*viewer: User\n/, '\n');
      if (c.schema.includes('viewer:')) throw new Error('mutation: Query.viewer not found');
    },
  },
  {
    name: 'openapi: the order id retyped integer -> string uuid (oasdiff passes integer -> string without reading the new format)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['GET /orders/{orderId}', '`orderId`', '`uuid`'],
    apply: (c) => {
      c.openapi.components.parameters.OrderId.schema = { type: 'string', format: 'uuid' };
    },
  },
  {
    name: "openapi: a response header's type changed (Retry-After integer -> string; oasdiff does not compare header schemas)",
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['`retry-after`', 'changed type from `integer` to `string`'],
    apply: (c) => {
      c.openapi.components.headers.RetryAfter.schema.type = 'string';
    },
  },
  {
    name: "openapi: a value added to a response header's enum (Idempotent-Replayed)",
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['`idempotent-replayed`', '`1`'],
    apply: (c) => {
      c.openapi.components.headers.IdempotentReplayed.schema.enum.push('1');
    },
  },
  {
    name: 'openapi: a success status added to a released operation (202 on POST /v2/orders; INFO in oasdiff, raised)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['POST /v2/orders', '202'],
    apply: (c) => {
      c.openapi.paths['/v2/orders'].post.responses['202'] = { description: 'Queued.' };
    },
  },
  {
    name: 'openapi: maxProperties set on a create body (oasdiff does not compare it)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['POST /v2/orders', 'maxProperties'],
    apply: (c) => {
      schemas(c).OrderCreateV2.maxProperties = 2;
    },
  },
  {
    name: 'openapi: a response property made optional (OrderV2.note): one change, however many operations and media types return it',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['response-property-became-optional'],
    causes: ['`OrderV2.note` made optional'],
    apply: (c) => {
      schemas(c).OrderV2.required = schemas(c).OrderV2.required.filter((f: string) => f !== 'note');
    },
  },
  {
    name: "openapi: Problem's code made optional (every error response of every operation): one change",
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['`code` became optional'],
    causes: ['`Problem.code` made optional'],
    apply: (c) => {
      schemas(c).Problem.required = schemas(c).Problem.required.filter((f: string) => f !== 'code');
    },
  },
  {
    name: "asyncapi: an enum set on a channel's address parameter (orderStream orderId; @asyncapi/diff leaves it unclassified)",
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['channel orderStream, parameter orderId', 'channel-parameter-enum-added'],
    causes: ['channel orderStream: `orderId` narrowed'],
    apply: (c) => {
      c.asyncapi.channels.orderStream.parameters.orderId.enum = ['1', '2'];
    },
  },
  {
    name: 'openapi: the null branch dropped from a request property (OrderCreateV2.discount): the property is named, not the branch',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['request-property-one-of-removed'],
    causes: ['`OrderCreateV2.discount` lost a branch'],
    apply: (c) => {
      schemas(c).OrderCreateV2.properties.discount.oneOf.splice(1, 1);
    },
  },
  {
    name: "openapi: a property's $ref replaced by a closed enum of its own (OrderV2.status): one change at the property, REST and realtime",
    expect: 'breaking',
    kinds: ['openapi', 'asyncapi'],
    mentions: ['response-property-max-length-unset', 'response-property-enum-value-added'],
    causes: ['`OrderV2.status` no longer refers to `#/components/schemas/OrderStatus`'],
    apply: (c) => {
      schemas(c).OrderV2.properties.status = { type: 'string', enum: ['pending', 'paid', 'shipped', 'delivered', 'cancelled'] };
    },
  },
  {
    name: "asyncapi: an operation's action turned (receiveOrderStream receive -> send): its messages' new direction is listed under it",
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['operation receiveOrderStream', 'request-body-added-required'],
    causes: ['operation receiveOrderStream: changed action from "receive" to "send"'],
    apply: (c) => {
      c.asyncapi.operations.receiveOrderStream.action = 'send';
    },
  },
  {
    name: "asyncapi: an operation's action turned (sendSubscription send -> receive): one breaking change, not one per message",
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['operation sendSubscription', 'request-body-removed'],
    causes: ['operation sendSubscription: changed action from "send" to "receive"'],
    apply: (c) => {
      c.asyncapi.operations.sendSubscription.action = 'receive';
    },
  },
  {
    name: "asyncapi: a payload's $ref re-pointed (OrderEventMessage.order from OrderV2 to OrderV1): the $ref is named, not OrderV2",
    expect: 'breaking',
    kinds: ['asyncapi'],
    mentions: ['message OrderEventMessage'],
    causes: ['`OrderEventMessage.payload.order` now refers to `./openapi.yaml#/components/schemas/OrderV1`'],
    apply: (c) => {
      payload(c, 'OrderEventMessage').properties.order.$ref = './openapi.yaml#/components/schemas/OrderV1';
    },
  },
  {
    name: 'openapi: a shared response header retyped (ApiVersionOut): one change at the header, not one per operation',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['response-header-schema-changed'],
    causes: ['`ApiVersionOut` response-header-schema-changed'],
    apply: (c) => {
      c.openapi.components.headers.ApiVersionOut.schema = { type: 'string' };
    },
  },
  {
    name: 'openapi: a response format changed on a property every branch declares (OrderV2.created_at): the branch that changed is named',
    expect: 'breaking',
    kinds: ['openapi'],
    causes: ['`OrderV2.created_at` response-property-format-changed'],
    apply: (c) => {
      schemas(c).OrderV2.properties.created_at.format = 'date';
    },
  },
  {
    name: "openapi: an optional $ref'd property removed (OrderLinks.cancel): the property is named, not the schema it referred to",
    expect: 'breaking',
    kinds: ['openapi'],
    causes: ['`OrderLinks.cancel` removed'],
    apply: (c) => {
      delete schemas(c).OrderLinks.properties.cancel;
    },
  },
  {
    name: 'openapi: a shared path parameter given a format (OrderId uuid): one change at the parameter',
    expect: 'breaking',
    kinds: ['openapi'],
    causes: ['`OrderId` narrowed'],
    apply: (c) => {
      c.openapi.components.parameters.OrderId.schema = { type: 'string', format: 'uuid' };
    },
  },
  {
    name: 'openapi: a response property retyped (OrderV2.total_cents): one change with the realtime payload that embeds it',
    expect: 'breaking',
    kinds: ['openapi', 'asyncapi'],
    causes: ['`OrderV2.total_cents` retyped'],
    apply: (c) => {
      schemas(c).OrderV2.properties.total_cents = { type: 'number' };
    },
  },
  {
    name: 'asyncapi: a shared payload schema narrowed (Channel pattern): one change at the schema, not one per message using it',
    expect: 'breaking',
    kinds: ['asyncapi'],
    causes: ['`Channel` request-property-pattern-changed'],
    apply: (c) => {
      c.asyncapi.components.schemas.Channel.pattern = '^order:[1-9][0-9]{0,5}$';
    },
  },
  {
    name: 'openapi: a Problem code renamed (the SDK retries on IDEMPOTENCY_KEY_IN_USE; oasdiff judges code lists on requests only)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['`IDEMPOTENCY_KEY_IN_USE`'],
    causes: ['`Problem.code` lost enum values'],
    apply: (c) => {
      const codes: string[] = schemas(c).Problem.properties.code['x-extensible-enum'];
      codes[codes.indexOf('IDEMPOTENCY_KEY_IN_USE')] = 'IDEMPOTENCY_KEY_BUSY';
    },
  },
  {
    name: 'openapi: two Problem codes dropped (one change: the code list)',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['`NOT_FOUND`', '`PRECONDITION_FAILED`'],
    causes: ['`Problem.code` lost enum values'],
    apply: (c) => {
      const code = schemas(c).Problem.properties.code;
      code['x-extensible-enum'] = code['x-extensible-enum'].filter((v: string) => v !== 'NOT_FOUND' && v !== 'PRECONDITION_FAILED');
    },
  },
  {
    name: 'openapi: a value dropped from a request code list (Currency) is one change, listed once per request',
    expect: 'breaking',
    kinds: ['openapi'],
    mentions: ['request-property-x-extensible-enum-value-removed', '`DKK`'],
    causes: ['`Currency` lost enum values'],
    apply: (c) => {
      const currency = schemas(c).Currency;
      currency['x-extensible-enum'] = currency['x-extensible-enum'].filter((v: string) => v !== 'DKK');
    },
  },
];

export const COMPATIBLE: Mutation[] = [
  {
    name: "asyncapi: the document's info.version bumped (about the document, not the wire)",
    expect: 'compatible',
    apply: (c) => {
      c.asyncapi.info.version = '99.0.0';
    },
  },
  {
    name: "openapi: a property's $ref replaced by a copy of the schema it named (OrderV2.status)",
    expect: 'compatible',
    apply: (c) => {
      schemas(c).OrderV2.properties.status = structuredClone(schemas(c).OrderStatus);
    },
  },
  {
    name: 'asyncapi: a channel address parameter given examples (documentation only)',
    expect: 'compatible',
    apply: (c) => {
      c.asyncapi.channels.orderStream.parameters.orderId.examples = ['42'];
    },
  },
  {
    name: "asyncapi: an error code added to the error message's open set (clients must accept codes added later)",
    expect: 'compatible',
    apply: (c) => {
      payload(c, 'ErrorMessage').properties.code['x-extensible-enum'].push('over_quota');
    },
  },
  {
    name: 'openapi: a Problem code added (clients must accept codes added later)',
    expect: 'compatible',
    apply: (c) => {
      schemas(c).Problem.properties.code['x-extensible-enum'].push('GONE');
    },
  },
  {
    name: 'openapi: a Problem code list kept as an enum with the same values plus one',
    expect: 'compatible',
    apply: (c) => {
      const code = schemas(c).Problem.properties.code;
      code.enum = [...code['x-extensible-enum'], 'GONE'];
      delete code['x-extensible-enum'];
    },
  },
  {
    name: 'openapi: a format added to a response header (Location: uri-reference narrows what a reader gets)',
    expect: 'compatible',
    apply: (c) => {
      c.openapi.components.headers.Location.schema.format = 'uri-reference';
    },
  },
  {
    name: 'openapi: an order id retyped integer -> string without a format (every released id is still accepted)',
    expect: 'compatible',
    apply: (c) => {
      c.openapi.components.parameters.OrderId.schema = { type: 'string' };
    },
  },
  {
    name: "openapi: version 1's sunset moved later, version 2 deprecated with a sunset",
    expect: 'compatible',
    apply: (c) => {
      const [v1, v2] = c.openapi.info['x-api-versions'];
      v1.sunset = '2028-01-01T00:00:00Z';
      Object.assign(v2, { deprecated: '2027-01-01T00:00:00Z', sunset: '2029-01-01T00:00:00Z', 'deprecation-link': '/docs#/section/versioning' });
    },
  },
  {
    name: 'openapi and asyncapi: security loosened (another way to authenticate added; /healthz stays anonymous)',
    expect: 'compatible',
    apply: (c) => {
      c.openapi.components.securitySchemes.apiKey = { type: 'apiKey', in: 'header', name: 'X-Api-Key' };
      c.openapi.security = [{ bearerAuth: [] }, { apiKey: [] }];
      for (const op of Object.values<Doc>(c.asyncapi.operations)) op.security = [...op.security, { $ref: '#/components/securitySchemes/bearer' }];
    },
  },
  {
    name: 'openapi: new response field (OrderV2.tracking_code)',
    expect: 'compatible',
    apply: (c) => {
      schemas(c).OrderV2.properties.tracking_code = { type: ['string', 'null'] };
      schemas(c).OrderV2.required.push('tracking_code');
    },
  },
  {
    name: 'openapi: new optional request field (OrderCreateV2.gift_wrap)',
    expect: 'compatible',
    apply: (c) => {
      schemas(c).OrderCreateV2.properties.gift_wrap = { type: 'boolean' };
    },
  },
  {
    name: 'openapi: new operation (POST /v2/orders/{orderId}/refund)',
    expect: 'compatible',
    apply: (c) => {
      c.openapi.paths['/v2/orders/{orderId}/refund'] = {
        parameters: [{ $ref: '#/components/parameters/OrderId' }],
        post: {
          operationId: 'refundOrderV2',
          responses: { '200': { description: 'Refunded.', content: { 'application/json': { schema: { $ref: '#/components/schemas/OrderV2' } } } } },
        },
      };
    },
  },
  {
    name: 'openapi: request field made optional (OrderReplaceV2.note)',
    expect: 'compatible',
    apply: (c) => {
      schemas(c).OrderReplaceV2.required = schemas(c).OrderReplaceV2.required.filter((f: string) => f !== 'note');
    },
  },
  {
    name: 'openapi: field deprecated with a sunset (step 2 of the workflow)',
    expect: 'compatible',
    apply: (c) => {
      Object.assign(schemas(c).OrderV2.properties.note, { deprecated: true, 'x-sunset': '2027-12-31' });
    },
  },
  {
    name: 'asyncapi: new optional field in a server message (ResyncMessage.hint)',
    expect: 'compatible',
    apply: (c) => {
      payload(c, 'ResyncMessage').properties.hint = { type: 'string' };
    },
  },
  {
    name: 'asyncapi: new message on a channel and its receive operation',
    expect: 'compatible',
    apply: (c) => {
      c.asyncapi.components.messages.GoodbyeMessage = {
        name: 'GoodbyeMessage',
        payload: { type: 'object', required: ['type'], properties: { type: { type: 'string', const: 'goodbye' } } },
      };
      c.asyncapi.channels.orders.messages.goodbye = { $ref: '#/components/messages/GoodbyeMessage' };
      c.asyncapi.operations.receiveOrders.messages.push({ $ref: '#/channels/orders/messages/goodbye' });
    },
  },
  {
    name: 'asyncapi: new channel with its operation',
    expect: 'compatible',
    apply: (c) => {
      c.asyncapi.channels.accountStream = {
        address: '/api/stream',
        servers: [{ $ref: '#/servers/sse' }],
        messages: { orderEvent: { $ref: '#/components/messages/OrderEventMessage' } },
      };
      c.asyncapi.operations.receiveAccountStream = {
        action: 'receive',
        channel: { $ref: '#/channels/accountStream' },
        messages: [{ $ref: '#/channels/accountStream/messages/orderEvent' }],
      };
    },
  },
  {
    name: 'asyncapi: titles and descriptions edited',
    expect: 'compatible',
    apply: (c) => {
      c.asyncapi.channels.orders.description = 'WebSocket endpoint (reworded).';
      c.asyncapi.operations.receiveOrders.title = 'Receive everything';
      c.asyncapi.components.messages.ErrorMessage.summary = 'Refused.';
    },
  },
  {
    name: 'graphql: new nullable field (Order.trackingCode)',
    expect: 'compatible',
    apply: (c) => sdl(c, '  note: String\n', '  note: String\n  trackingCode: String\n'),
  },
  {
    name: 'graphql: field deprecated (step 2 of the workflow)',
    expect: 'compatible',
    apply: (c) => sdl(c, '  note: String\n', '  note: String @deprecated(reason: "use notes")\n'),
  },
  {
    name: 'graphql: new type and query field',
    expect: 'compatible',
    apply: (c) => {
      sdl(c, '  viewer: User\n', '  viewer: User\n  shipment(id: ID!): Shipment\n');
      c.schema += '\ntype Shipment {\n  id: ID!\n  carrier: String!\n}\n';
    },
  },
  {
    name: 'graphql: new nullable argument without default (User.orders(status: String))',
    expect: 'compatible',
    apply: (c) => sdl(c, 'orders(first: Int, after: ID)', 'orders(first: Int, after: ID, status: String)'),
  },
  {
    name: 'graphql: DANGEROUS change listed in compat-accepted.yaml',
    expect: 'compatible',
    apply: (c) => {
      sdl(c, 'friends(first: Int)', 'friends(first: Int = 10)');
      c.accepted = stringify({
        graphql: [
          {
            path: 'User.friends.first',
            message: "Default value '10' was added to argument 'first' on field 'User.friends'",
            reason: 'resolvers already used 10 when first was absent (corpus test)',
          },
        ],
      });
    },
  },
  {
    name: 'operations: new operation file',
    expect: 'compatible',
    apply: (c) => {
      c.operations['OrderStatus.graphql'] = 'query OrderStatus($id: ID!) {\n  order(id: $id) {\n    id\n    status\n  }\n}\n';
    },
  },
  {
    name: 'operations: released file reformatted (same printed text, same hash)',
    expect: 'compatible',
    apply: (c) => {
      c.operations['User.graphql'] = `# who is this\n${c.operations['User.graphql'].replace(/\n\s+/g, ' ')}`;
    },
  },
];

export const CORPUS: Mutation[] = [...BREAKING, ...COMPATIBLE];

/** The repo's contracts, parsed for mutating. */
export function readContracts(contractsDir: string): Contracts {
  const opsDir = join(contractsDir, 'operations');
  return {
    openapi: parse(readFileSync(join(contractsDir, 'openapi.yaml'), 'utf8')),
    asyncapi: parse(readFileSync(join(contractsDir, 'asyncapi.yaml'), 'utf8')),
    schema: readFileSync(join(contractsDir, 'schema.graphql'), 'utf8'),
    operations: Object.fromEntries(
      readdirSync(opsDir)
        .filter((f) => f.endsWith('.graphql'))
        .map((f) => [f, readFileSync(join(opsDir, f), 'utf8')]),
    ),
  };
}

/** Parsing the contracts costs ~0.3 s; the corpus parses them once per process and clones. */
const parsed = new Map<string, Contracts>();

/**
 * A temp dir with `contracts/released/` = the repo's contracts as they are and
 * `contracts/` = the mutated copy. A YAML document the mutation left alone is copied
 * byte for byte (so the gate sees it unchanged, as it would in a real edit), unless
 * `rewriteAll` asks for every file re-serialized. Returns the temp contracts dir and a
 * cleanup.
 */
export function materialize(repoContracts: string, mutation: Mutation, rewriteAll = false): { contracts: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'orderline-mutation-'));
  const contracts = join(root, 'contracts');
  const released = join(contracts, 'released');
  mkdirSync(join(released, 'operations'), { recursive: true });
  for (const f of CONTRACT_FILES) cpSync(join(repoContracts, f), join(released, f));
  cpSync(join(repoContracts, 'operations'), join(released, 'operations'), { recursive: true });

  if (!parsed.has(repoContracts)) parsed.set(repoContracts, readContracts(repoContracts));
  const original = parsed.get(repoContracts) as Contracts;
  // Mutations edit a clone, never the repo's files nor the cached parse.
  const c = structuredClone(original);
  mutation.apply(c);
  const yaml = (doc: Doc) => stringify(doc, { aliasDuplicateObjects: false, lineWidth: 0 });
  const same = (a: Doc, b: Doc) => JSON.stringify(a) === JSON.stringify(b);
  mkdirSync(join(contracts, 'operations'), { recursive: true });
  for (const [file, doc, orig] of [
    ['openapi.yaml', c.openapi, original.openapi],
    ['asyncapi.yaml', c.asyncapi, original.asyncapi],
  ] as const) {
    if (!rewriteAll && same(doc, orig)) cpSync(join(repoContracts, file), join(contracts, file));
    else writeFileSync(join(contracts, file), yaml(doc));
  }
  writeFileSync(join(contracts, 'schema.graphql'), c.schema);
  for (const [f, text] of Object.entries(c.operations)) writeFileSync(join(contracts, 'operations', f), text);
  writeFileSync(join(contracts, 'compat-accepted.yaml'), c.accepted ?? readFileSync(join(repoContracts, 'compat-accepted.yaml'), 'utf8'));
  return { contracts, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}
