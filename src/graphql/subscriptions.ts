/**
 * GraphQL subscriptions over WebSocket on /graphql: the graphql-transport-ws protocol
 * (graphql-ws's `makeServer`, the protocol core Apollo Server and Yoga use) on the
 * realtime tier's connections (realtime/ws.ts `mount`: the accept limiter, the bearer
 * rule, problem+json refusals, the bounded queue with 1013, 1001 on shutdown).
 *
 * - Authentication: the upgrade's token (checked by the realtime tier), else the
 *   `connection_init` payload (`authorization: "Bearer <token>"` or `access_token`);
 *   none or a bad one closes 4403 Forbidden, graphql-ws's answer to a refused init.
 * - Each `subscribe` is judged by the engine as a request is (engine `admit`: APQ or
 *   allowlist, parse limits, graphql-js's rules, depth, cost, the cost budget); a refusal
 *   is an `error` message whose errors carry `extensions.code`, and the socket stays open.
 *   Queries and mutations are refused here: they have one path, POST /graphql.
 * - `orderEvents` is the topic hub's subscription (realtime/hub.ts): the same ring, seqs,
 *   replay-once-then-live and resync as SSE and the /orders WebSocket, on every instance.
 *
 * Why events bypass graphql-ws's `next`: graphql-ws executes and JSON-encodes every event
 * once per subscriber. Here an event is executed once per distinct operation (document,
 * operation name and the variables its selection reads) and its payload JSON is shared by
 * every subscriber of the topic that sent that operation (centrifuge's prepared messages,
 * as the /orders channel shares its frames); each subscriber adds only its `id` and the
 * frame header. The source graphql-ws iterates yields nothing; it ends when the
 * subscription does, so graphql-ws still owns the protocol (init, ping, subscribe,
 * complete, errors, duplicate ids) and the subscription's lifecycle.
 */
import { createSourceEventStream, GraphQLError, Kind, visit, type DocumentNode, type ExecutionArgs, type ExecutionResult, type OperationDefinitionNode } from 'graphql';
import { CloseCode, handleProtocols, makeServer, type Context, type SubscribePayload } from 'graphql-ws';
import { isRefusal, parseClientJson, streamToken, type Refusal } from '../http';
import { StoreUnavailableError, type Account, type Store } from '../store';
import { wsTextFrame, type Frame, type Subscriber, type TopicHub, type WsConnection, type WsProtocol } from '../realtime';
import { validateOrderEventMessage } from '../../generated/asyncapi/validators';
import { codeOf, coded, GRAPHQL_CODES } from './errors';
import type { GraphqlEngine } from './engine';
import { createLoaders } from './loaders';
import type { GraphqlContext, OrderEventView } from './resolvers';

export interface SubscriptionsDeps {
  engine: GraphqlEngine;
  store: Store;
  hub: TopicHub;
  /** The service's token check (the 401 refusal for a bad one). */
  authenticate: (token: string | undefined) => Promise<Account | Refusal>;
  /** Subscriptions one connection may hold at once (MAX_SUBSCRIPTIONS_PER_CONNECTION); one more is an `error` with TOO_MANY_SUBSCRIPTIONS. */
  maxSubscriptions: number;
  /**
   * Largest client message (BODY_LIMIT_BYTES): a subscribe carries its query text, as a POST
   * body does, so the two take the same documents; over it the socket closes 1009.
   */
  maxMessageBytes: number;
  onError?: (err: unknown) => void;
}

/** What graphql-ws keeps per connection beside its own state. */
interface Extra {
  conn: WsConnection;
  account: Account | undefined;
}

/**
 * The payload of an event per shared operation key, built once (frames leave the ring, and
 * their payloads with them): its JSON and the `}` closing the message, as UTF-8 bytes.
 */
const payloads = new WeakMap<Frame, Map<string, Buffer>>();

/**
 * An execution result as the shared end of a `next` message. A field error (an order total
 * the deprecated `totalCents: Int!` cannot hold) gets its code as over HTTP: the resolver's,
 * else INTERNAL_SERVER_ERROR.
 */
const messageBody = (result: ExecutionResult): Buffer => Buffer.from(`${JSON.stringify(result.errors?.length ? { ...result, errors: coded(result.errors, GRAPHQL_CODES.INTERNAL_SERVER_ERROR) } : result)}}`);
const documentIds = new WeakMap<DocumentNode, number>();
let nextDocumentId = 1;

/**
 * The variables an event's execution reads: every variable the operation uses except
 * those only in the root field's arguments (`id`, `since`: the stream, not the payload,
 * depends on them). Subscribers whose operations agree on these share the payload.
 */
function payloadVariables(document: DocumentNode, op: OperationDefinitionNode): string[] {
  const rootArguments = new Set(op.selectionSet.selections.flatMap((s) => (s.kind === Kind.FIELD ? (s.arguments ?? []) : [])));
  const names = new Set<string>();
  visit(document, {
    VariableDefinition: () => false,
    Argument: (node) => (rootArguments.has(node) ? false : undefined),
    Variable: (node) => void names.add(node.name.value),
  });
  return [...names].sort();
}

function shareKey(document: DocumentNode, op: OperationDefinitionNode, variables: Readonly<Record<string, unknown>> | null | undefined): string {
  let id = documentIds.get(document);
  if (id === undefined) documentIds.set(document, (id = nextDocumentId++));
  const used = payloadVariables(document, op).map((name) => [name, variables?.[name]]);
  return `${id}\u0000${op.name?.value ?? ''}\u0000${JSON.stringify(used)}`;
}

/**
 * The view of a frame's event. Live frames carry the committed event; a replayed one
 * holds the message's JSON alone (ring.ts keeps only that), whose order is the v2
 * representation of the same record: read back into it (the account is the
 * subscriber's, the revision the seq). Null for a frame that is not an order event.
 */
function viewOf(frame: Frame, accountId: number): OrderEventView | null {
  if (frame.event) return { seq: frame.event.seq, type: frame.event.type, order: frame.event.order, resync: null };
  const message: unknown = JSON.parse(frame.json);
  if (!validateOrderEventMessage(message)) return null;
  const o = message.order;
  const order = {
    id: o.id,
    accountId,
    revision: message.seq,
    status: o.status,
    items: o.items.map((i) => ({ sku: i.sku, quantity: i.quantity, unit_price_cents: i.unit_price_cents })),
    currency: o.currency,
    discount: o.discount ? { code: o.discount.code, percent: o.discount.percent } : null,
    note: o.note,
    createdAt: o.created_at,
    updatedAt: o.updated_at,
  };
  return { seq: message.seq, type: message.type, order, resync: null };
}

/** A close frame's reason holds at most 123 bytes of UTF-8 (RFC 6455 5.5): longer text is cut at a character, marked `...`. */
export function closeReason(text: string): string {
  if (Buffer.byteLength(text) <= 123) return text;
  let cut = '';
  let bytes = 0;
  for (const ch of text) {
    bytes += Buffer.byteLength(ch);
    if (bytes > 120) break;
    cut += ch;
  }
  return `${cut}...`;
}

/**
 * Errors as `error` messages carry them, each with its code (errors.ts `codeOf`): a
 * subscription that could not start because the store is down says UNAVAILABLE (subscribe
 * again later), with nothing of the driver's message; an error of the server's own is
 * INTERNAL_SERVER_ERROR.
 */
const withCodes = (errors: readonly GraphQLError[]): GraphQLError[] =>
  errors.map((e) => {
    const code = codeOf(e, GRAPHQL_CODES.INTERNAL_SERVER_ERROR);
    if (code === GRAPHQL_CODES.UNAVAILABLE && !e.extensions?.code) return new GraphQLError('The store is unavailable: subscribe again later', { extensions: { code } });
    return e.extensions?.code ? e : new GraphQLError(e.message, { nodes: e.nodes, path: e.path, extensions: { ...e.extensions, code } });
  });

/**
 * The source graphql-ws iterates for one subscription: it yields nothing (events are
 * written as they come), starts the hub subscription on the first `next`, and ends (done,
 * or the error `fail` gives it) when the subscription ends from either side.
 */
class OrderEventSource implements AsyncIterableIterator<never> {
  private started = false;
  private ended = false;
  private waiting: { resolve: (r: IteratorResult<never>) => void; reject: (err: unknown) => void } | undefined;
  private failure: Error | undefined;

  constructor(
    private readonly start: () => void,
    private readonly stop: () => void,
    /** Told once when it ends, whichever side ended it. */
    private readonly onEnd: () => void,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<never>> {
    if (this.ended) return this.failure === undefined ? Promise.resolve({ done: true, value: undefined }) : Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      if (!this.started) {
        this.started = true;
        this.start();
      }
    });
  }

  return(): Promise<IteratorResult<never>> {
    this.end();
    return Promise.resolve({ done: true, value: undefined });
  }

  /** Ends the subscription: graphql-ws sees the end (or the error) and completes it. */
  end(failure?: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = failure;
    if (this.started) this.stop();
    this.onEnd();
    const w = this.waiting;
    this.waiting = undefined;
    if (!w) return;
    if (failure === undefined) w.resolve({ done: true, value: undefined });
    else w.reject(failure);
  }
}

/** graphql-transport-ws message types only the server sends. */
const SERVER_ONLY = new Set(['connection_ack', 'next', 'error']);

/** A client message's `type` and `id`, where they are strings. */
function messageKey(json: unknown): { type: string | undefined; id: string | undefined } {
  if (typeof json !== 'object' || json === null) return { type: undefined, id: undefined };
  const type: unknown = Reflect.get(json, 'type');
  const id: unknown = Reflect.get(json, 'id');
  return { type: typeof type === 'string' ? type : undefined, id: typeof id === 'string' ? id : undefined };
}

/**
 * The protocol lets a client use an id again once it completed it. graphql-ws keys its
 * subscriptions by id alone, so a `subscribe`, `complete`, `subscribe` of one id, sent
 * while the first is still starting (its document checked, its order read), left two
 * subscriptions under the id: the first, which it then took for the second, ran on and
 * outlived the connection (its events sent twice, then to nobody, past the per-connection
 * cap), or the first's end completed the second. So a `subscribe` whose id a `complete`
 * freed while its first subscribe is still in graphql-ws's hands waits, with every message
 * behind it, until that one has finished (then at once: a completed subscription ends
 * without starting). Any other message goes straight through.
 */
class IdReuse {
  /** Subscribes graphql-ws is handling, by id; `completed`: the client completed the id since. */
  private readonly inFlight = new Map<string, { completed: boolean; done: Promise<void> }>();
  /** Set while messages wait behind a reused id: everything after them waits too, in order. */
  private queue: Promise<void> | undefined;

  deliver(type: string | undefined, id: string | undefined, handle: () => Promise<void>): void {
    const waited = this.queue ? this.queue.then(() => this.now(type, id, handle)) : this.now(type, id, handle);
    if (!waited) return;
    this.queue = waited;
    void waited.then(() => {
      if (this.queue === waited) this.queue = undefined;
    });
  }

  /** Hands the message to graphql-ws, or returns what it waits for first. */
  private now(type: string | undefined, id: string | undefined, handle: () => Promise<void>): Promise<void> | undefined {
    if (id === undefined) return void handle();
    if (type === 'complete') {
      const entry = this.inFlight.get(id);
      if (entry) entry.completed = true;
      return void handle();
    }
    if (type !== 'subscribe') return void handle();
    const prior = this.inFlight.get(id);
    if (prior?.completed) return prior.done.then(() => void this.start(id, handle));
    this.start(id, handle);
    return undefined;
  }

  private start(id: string, handle: () => Promise<void>): void {
    const entry = { completed: false, done: handle() };
    this.inFlight.set(id, entry);
    void entry.done.then(() => {
      if (this.inFlight.get(id) === entry) this.inFlight.delete(id);
    });
  }
}

export function graphqlSubscriptions(deps: SubscriptionsDeps): WsProtocol {
  const { engine, store, hub } = deps;
  const sources = new WeakMap<ExecutionArgs, OrderEventSource>();
  /**
   * Each connection's sources that have not ended, ended when it closes: graphql-ws ends
   * those it holds, and one it lost track of must not outlive the connection either.
   */
  const live = new WeakMap<WsConnection, Set<OrderEventSource>>();

  /** Executes one stream message for an operation (synchronously for OrderEvent's resolvers; a promise if one ever is async). */
  function render(args: ExecutionArgs, view: OrderEventView): Buffer | Promise<Buffer> {
    const result = engine.execute({ ...args, rootValue: view });
    return result instanceof Promise ? result.then(messageBody) : messageBody(result);
  }

  /**
   * One subscription's hub subscriber: every message through one ordered chain, so a
   * payload that takes a promise never lets a later one overtake it.
   */
  function subscriberFor(conn: WsConnection, accountId: number, id: string, args: ExecutionArgs, key: string, source: () => OrderEventSource | undefined): Subscriber {
    // `{"id":...,"type":"next","payload":` is this subscription's; the payload and its `}` are shared (see wsTextFrame).
    const head = Buffer.from(`{"id":${JSON.stringify(id)},"type":"next","payload":`);
    let tail: Promise<void> | undefined;
    const writeNext = (body: Buffer) => conn.writeFrame(wsTextFrame(head, body));
    const deliver = (body: Buffer | Promise<Buffer>) => {
      if (tail === undefined && !(body instanceof Promise)) return writeNext(body);
      tail = (tail ?? Promise.resolve())
        .then(() => body)
        .then(writeNext)
        .catch((err: unknown) => {
          deps.onError?.(err);
          conn.closeTryAgain(); // a message could not be rendered: resume rather than skip it
        });
    };
    const control = (view: OrderEventView) => deliver(render(args, view));
    return {
      lastSeq: 0,
      ack: (from) => control({ seq: from, type: 'subscribed', order: null, resync: null }),
      write(frame) {
        let shared = payloads.get(frame);
        if (!shared) payloads.set(frame, (shared = new Map<string, Buffer>()));
        const known = shared.get(key);
        if (known !== undefined) return deliver(known);
        const view = viewOf(frame, accountId);
        if (!view) {
          // Not an order event: never skip a seq silently; the client resumes from what it has.
          deps.onError?.(new Error(`frame ${frame.seq} of a topic is not an order event`));
          return conn.closeTryAgain();
        }
        const payload = render(args, view);
        if (!(payload instanceof Promise)) shared.set(key, payload);
        deliver(payload);
      },
      resync: (seq, reason) => control({ seq, type: 'resync', order: null, resync: reason }),
      // A hole in delivery: the connection closes (1013) so the client resumes with `since`.
      drop: () => conn.closeTryAgain(),
      fail: () => source()?.end(new GraphQLError("The order's stream could not be loaded: subscribe again later", { extensions: { code: GRAPHQL_CODES.UNAVAILABLE } })),
    };
  }

  const server = makeServer<Record<string, unknown> | undefined, Extra>({
    schema: engine.schema,
    async onConnect(ctx) {
      const params = ctx.connectionParams ?? {};
      const header = params.authorization ?? params.Authorization;
      // A Bearer `authorization` and an `access_token` together are refused, as on the upgrade (RFC 6750 3.1).
      const token = streamToken(typeof header === 'string' ? header : undefined, params.access_token);
      if (token !== undefined && typeof token !== 'string') return false;
      if (token === undefined) return ctx.extra.account !== undefined; // the upgrade's token, if it carried one
      // A token in connection_init is checked even after the upgrade's: a bad one, or another
      // account's, closes 4403 rather than being ignored in silence.
      let found: Awaited<ReturnType<typeof deps.authenticate>>;
      try {
        found = await deps.authenticate(token);
      } catch (err) {
        if (!(err instanceof StoreUnavailableError)) throw err;
        // The token cannot be checked now: 1013, which graphql-ws clients retry (its 4500 they take as final), as the upgrade answers 503.
        ctx.extra.conn.close(1013, 'Try again later: the store is unavailable');
        return false;
      }
      if (isRefusal(found)) return false;
      if (ctx.extra.account && ctx.extra.account.id !== found.id) return false;
      // The same account's second credential: revoking it ends the connection too, as revoking the upgrade's does.
      if (ctx.extra.account) ctx.extra.conn.holdToken(token);
      if (!ctx.extra.account && !ctx.extra.conn.claim(found.id, token)) {
        // The account's streams are all taken (realtime/quota.ts): 1008, which graphql-ws clients retry with backoff.
        ctx.extra.conn.close(1008, 'Too many streams for this account: close one, or retry later');
        return false;
      }
      ctx.extra.account = found;
      return true;
    },
    // Each subscribe counts once, as each request does, with the outcome its client got: `ok` once it started, else the first error's code.
    async onSubscribe(ctx: Context<Record<string, unknown> | undefined, Extra>, id, payload) {
      const started = await start(ctx, id, payload);
      engine.countOutcome(Array.isArray(started) ? started : undefined);
      return started;
    },
    subscribe: (args) => sources.get(args) ?? { errors: [new GraphQLError('The subscription could not start', { extensions: { code: GRAPHQL_CODES.BAD_REQUEST } })] },
  });

  /** A subscribe message: the errors its client is told, or the arguments of the subscription it starts. */
  async function start(ctx: Context<Record<string, unknown> | undefined, Extra>, id: string, payload: SubscribePayload): Promise<readonly GraphQLError[] | ExecutionArgs> {
    const { conn, account } = ctx.extra;
    if (!account) return [new GraphQLError('Not authenticated', { extensions: { code: GRAPHQL_CODES.UNAUTHENTICATED } })];
    // graphql-ws has entered this one already (its id maps to null until it starts).
    if (Object.keys(ctx.subscriptions).length > deps.maxSubscriptions) {
      return [new GraphQLError(`A connection holds at most ${deps.maxSubscriptions} subscriptions: complete one, or open another connection`, { extensions: { code: GRAPHQL_CODES.TOO_MANY_SUBSCRIPTIONS } })];
    }
    const variables = payload.variables ?? undefined;
    const admission = await engine.admit({ query: payload.query, operationName: payload.operationName || undefined, variables, extensions: payload.extensions ?? undefined }, account);
    if (!admission.ok) return [...admission.errors];
    const { document, op } = admission;
    const key = shareKey(document, op, variables);
    let source: OrderEventSource | undefined;
    let loaders: ReturnType<typeof createLoaders> | undefined;
    const context: GraphqlContext = {
      store,
      account,
      // No field of OrderEvent reads a loader: created only if one ever does (an idle subscription holds none).
      get loaders() {
        return (loaders ??= createLoaders(store));
      },
      orderEvents: async (orderId, since) => {
        const order = await store.getOrder(account.id, orderId);
        if (!order) return null;
        const sub = subscriberFor(conn, account.id, id, args, key, () => source);
        let own = live.get(conn);
        if (!own) live.set(conn, (own = new Set()));
        const held = own;
        const made: OrderEventSource = new OrderEventSource(
          () => void hub.subscribe(orderId, since, sub, order.revision),
          () => hub.unsubscribe(orderId, sub),
          () => held.delete(made),
        );
        held.add(made);
        source = made;
        return made;
      },
    };
    const args: ExecutionArgs = { schema: engine.schema, document, operationName: payload.operationName || undefined, variableValues: variables, contextValue: context };
    const stream = await createSourceEventStream(args);
    if (!(Symbol.asyncIterator in stream)) return withCodes(stream.errors ?? [new GraphQLError('The subscription could not start')]);
    if (source) sources.set(args, source); // else subscribe() answers that it could not start
    return args;
  }

  return {
    maxPayload: deps.maxMessageBytes,
    selectProtocol: (offered) => handleProtocols(offered),
    open(conn, account) {
      const order = new IdReuse();
      const closed = server.opened(
        {
          protocol: conn.protocol,
          send: (text) => conn.send(text),
          close: (code = CloseCode.InternalServerError, reason = '') => conn.close(code, reason),
          onMessage(cb) {
            conn.onMessage((text) => {
              // The service's one reader of client JSON first (nesting bound, unpaired
              // surrogates, repeated member names), as for an HTTP body: a frame it refuses
              // is not a message of the protocol, which closes 4400 for those (graphql-ws
              // then parses the accepted text itself).
              const read = parseClientJson(text, 'The message');
              if (isRefusal(read)) return conn.close(CloseCode.BadRequest, closeReason(read.problem.detail ?? read.problem.title));
              const { type, id } = messageKey(read.json);
              // A message only the server sends (`next`, `error`, `connection_ack`): the client's protocol error, 4400
              // as graphql-ws closes for an invalid message, where its handler would throw and close 4500.
              if (type !== undefined && SERVER_ONLY.has(type)) return conn.close(CloseCode.BadRequest, 'Invalid message received');
              order.deliver(type, id, () =>
                cb(text).catch((err: unknown) => {
                  // graphql-ws's own answer to a failure of its handler (its own WebSocket server adapter answers the same).
                  deps.onError?.(err);
                  conn.close(CloseCode.InternalServerError, 'Internal server error');
                }),
              );
            });
          },
        },
        { conn, account },
      );
      conn.onClose((code, reason) => {
        for (const s of live.get(conn) ?? []) s.end();
        closed(code, reason).catch((err: unknown) => deps.onError?.(err));
      });
    },
  };
}
