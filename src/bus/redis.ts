/**
 * The scaled-out bus on Redis pub/sub (ioredis): one channel per topic
 * (`<prefix>order:<id>`), which an instance subscribes to while its hub has watchers
 * on that topic, so an instance receives only the events somebody on it is watching.
 *
 * Why pub/sub and not a Redis Stream per topic as the ring: the ring already exists,
 * durable and gap-free, in the event table (written in the write's own transaction);
 * an XADD after commit is a second write that a crash between the two loses, leaving a
 * hole only the event table could fill. So Redis only carries the news, at most once,
 * and every hub reads from the event table what the news did not bring (see bus.ts):
 * - a publisher delivers to its own hub first, synchronously, and skips its own
 *   message when Redis echoes it back;
 * - when the subscriber connection comes back after a drop (a Redis restart, a network
 *   cut) every message in between may be lost: once ioredis has re-subscribed (our PING
 *   is answered after its SUBSCRIBE), `reconnected` makes the hubs catch up;
 * - when the publishing connection comes back, it broadcasts a catch-up on the control
 *   channel, since peers whose own connection never dropped would not know.
 */
import { randomUUID } from 'node:crypto';
import Redis, { type RedisOptions } from 'ioredis';
import type { OrderEvent } from '../store';
import type { Bus, BusHandlers } from './bus';

export interface RedisBusOptions {
  /** Namespace of every channel and key, so deployments (or tests) can share one Redis. */
  prefix: string;
  /**
   * The deployment this bus carries the news of (StoreLifecycle.deploymentId): the prefix is
   * claimed for it when the bus opens (DeploymentClashError when another deployment holds it),
   * and a message of another deployment is dropped, so that two deployments given the same
   * prefix (the default one, say) never deliver each other's orders. Absent (tests): no claim.
   */
  deployment?: string;
  /**
   * How often the claim is made again while the bus runs (default 10 s; also at each
   * reconnection): a Redis that lost its data (restarted without persistence, FLUSHALL, a
   * failover to an empty replica) would otherwise leave the prefix to the next deployment
   * that starts on it, and refuse this one's next instance.
   */
  claimEveryMs?: number;
  onError?: (err: unknown) => void;
  /**
   * A message on one of its channels that is not this bus's wire format (another program, a
   * PUBLISH by hand, an older release): dropped, and told here rather than as an error of
   * Redis, which is reachable (default: `onError`).
   */
  onDropped?: (err: Error) => void;
  /**
   * While it runs, the prefix found claimed by another deployment (told once, until the claim is
   * ours again): a wrong setup, not an outage (Redis answered), so not `onError` (the default).
   */
  onClash?: (err: DeploymentClashError) => void;
  /** A connection is back after it was lost (ioredis reconnected: 'ready' again). */
  onRecovered?: () => void;
  /** Each time the hubs are told to catch up (for metrics). */
  onCatchUp?: () => void;
}

type Wire = ({ from: string; event: OrderEvent } | { from: string; catchUp: true }) & { dep?: string };

const EVENT_TYPES: ReadonlySet<unknown> = new Set<OrderEvent['type']>(['order.created', 'order.updated', 'order.cancelled']);
const field = (o: object, name: string): unknown => Reflect.get(o, name);

/** Whether `x` has the shape of a message this bus publishes (the event's order is the store's record, taken as sent). */
function isWire(x: unknown): x is Wire {
  if (typeof x !== 'object' || x === null || typeof field(x, 'from') !== 'string') return false;
  const dep = field(x, 'dep');
  if (dep !== undefined && typeof dep !== 'string') return false;
  if (field(x, 'catchUp') === true) return true;
  const e = field(x, 'event');
  if (typeof e !== 'object' || e === null) return false;
  const order = field(e, 'order');
  return (
    Number.isSafeInteger(field(e, 'orderId')) &&
    Number.isSafeInteger(field(e, 'accountId')) &&
    Number.isSafeInteger(field(e, 'seq')) &&
    EVENT_TYPES.has(field(e, 'type')) &&
    typeof order === 'object' &&
    order !== null &&
    typeof field(e, 'createdAt') === 'string'
  );
}

/** REDIS_PREFIX is another deployment's (another database, or schema): refused at start. */
export class DeploymentClashError extends Error {
  override readonly name = 'DeploymentClashError';
}

const RETRY = (attempt: number) => Math.min(100 * attempt, 2000);

/** How long `watch` waits for a SUBSCRIBE Redis stopped answering before the topic loads without it. */
export const WATCH_WAIT_MS = 2000;

/** How long a command (a take, a charge, a lookup, a ping) waits for Redis before it fails as in an outage. */
export const REDIS_COMMAND_TIMEOUT_MS = 1000;

/**
 * Connects and waits until Redis answers, or rejects with the reason (startup refuses
 * an unreachable REDIS_URL instead of serving without fan-out). After that, ioredis
 * reconnects by itself.
 * - `commands`: no offline queue, one retry, so a command during an outage fails at
 *   once (APQ falls back to the client's text, a publish is made good by catch-up)
 *   instead of holding a request; and a command Redis does not answer within
 *   REDIS_COMMAND_TIMEOUT_MS fails too. A Redis that keeps its connections but stops
 *   answering (paused, overloaded, a partition that drops packets) refuses nothing: without
 *   the timeout every request waiting on it (a rate-limit take, a cost-budget charge, an APQ
 *   lookup, /readyz's ping) hung until it came back.
 * - `subscriber`: commands wait for the connection, so a SUBSCRIBE issued during an
 *   outage is sent once Redis is back.
 */
export async function connectRedis(url: string, role: 'commands' | 'subscriber', onError?: (err: unknown) => void, onReconnected?: () => void): Promise<Redis> {
  const options: RedisOptions =
    role === 'commands'
      ? { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 5000, commandTimeout: REDIS_COMMAND_TIMEOUT_MS, retryStrategy: RETRY }
      : { lazyConnect: true, enableOfflineQueue: true, maxRetriesPerRequest: null, connectTimeout: 5000, retryStrategy: RETRY };
  const redis = new Redis(url, { ...options, connectionName: `orderline-${role}` });
  let started = false;
  let firstError: unknown;
  // ioredis prints unhandled 'error' events to the console; ours go to the log.
  redis.on('error', (err) => {
    if (started) onError?.(err);
    else firstError ??= err;
  });
  // Every 'ready' after the first is a reconnection.
  redis.on('ready', () => {
    if (started) onReconnected?.();
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    throw firstError ?? err; // the socket's reason (ECONNREFUSED...), not "Connection is closed"
  }
  if (role === 'commands') failFastAfterTimeout(redis);
  started = true;
  return redis;
}

/**
 * After a command times out, the connection is dropped and made anew (ioredis's reconnect,
 * RETRY), so the commands behind it fail at once instead of each waiting its own
 * REDIS_COMMAND_TIMEOUT_MS: with the offline queue off, a command fails at once while the
 * connection is not ready, and it is not ready again until Redis answers. Without this a
 * request that takes a rate-limit token, charges the cost budget and looks up an APQ hash
 * waited a second for each, and the commands sent to a Redis that reads nothing piled up in
 * the socket for as long as it hung. ioredis reports a timeout only to the command's own
 * promise, so the hook is on `sendCommand`, every command's way out. The connection is
 * dropped once for all the commands that time out together (its status stays `ready` until
 * the socket has closed, and each `disconnect` adds a listener to it: node warned of a leak
 * past ten), and again only once it has been ready anew.
 */
function failFastAfterTimeout(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  let dropping = false;
  redis.on('ready', () => void (dropping = false));
  redis.sendCommand = (command, stream) => {
    const sent = send(command, stream);
    command.promise.catch((err: unknown) => {
      if (err instanceof Error && err.message === 'Command timed out' && redis.status === 'ready' && !dropping) {
        dropping = true;
        redis.disconnect(true);
      }
    });
    return sent;
  };
}

/**
 * Claims `<prefix>deployment` for `deployment` (SET NX: the first deployment to open a bus on
 * the prefix holds it for good); throws DeploymentClashError when another one holds it.
 */
async function claimPrefix(redis: Redis, prefix: string, deployment: string): Promise<void> {
  const key = `${prefix}deployment`;
  await redis.set(key, deployment, 'NX');
  const holder = await redis.get(key);
  if (holder !== deployment) {
    throw new DeploymentClashError(`REDIS_PREFIX "${prefix}" is another deployment's (its database or schema is not this one's): give each deployment its own REDIS_PREFIX, or, if that deployment is gone, DEL ${key}`);
  }
}

export class RedisBus implements Bus {
  readonly kind = 'redis';
  /** Tells this instance's own messages apart when Redis echoes them back. */
  private readonly id = randomUUID();
  private readonly control: string;
  private handlers: BusHandlers | undefined;
  private closed = false;
  /** Makes the prefix's claim again (see `RedisBusOptions.claimEveryMs`). */
  private claimTimer: NodeJS.Timeout | undefined;

  /** Both connections ready (see `connectRedis`); `start` subscribes to the control channel. */
  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    private readonly opts: RedisBusOptions,
  ) {
    this.control = `${opts.prefix}control`;
    sub.on('message', (channel: string, message: string) => this.receive(channel, message));
    // Every 'ready' after construction is a reconnection (the first one was awaited before).
    sub.on('ready', () => {
      this.sub
        .ping()
        .then(() => {
          this.subStalled = false;
          this.catchUp();
        })
        .catch((err) => this.opts.onError?.(err));
    });
    pub.on('ready', () => {
      this.send(this.control, { from: this.id, catchUp: true });
      this.claimAgain();
    });
  }

  /** Claims the prefix again every `claimEveryMs` from now (once the bus has opened: a failed open leaves no timer). */
  private keepClaiming(): void {
    if (this.opts.deployment === undefined) return;
    this.claimTimer = setInterval(() => this.claimAgain(), this.opts.claimEveryMs ?? 10_000);
    this.claimTimer.unref();
  }

  /** Whether the last claim found another deployment holding the prefix (reported once, until it is ours again). */
  private clashing = false;

  /** A SUBSCRIBE went unanswered for WATCH_WAIT_MS on a connection still open: Redis hangs (cleared when it answers). */
  private subStalled = false;

  /** The prefix's claim while running: a clash found now is reported once (this instance's messages are tagged and others' dropped meanwhile). */
  private claimAgain(): void {
    const deployment = this.opts.deployment;
    if (deployment === undefined || this.closed || this.pub.status !== 'ready') return;
    claimPrefix(this.pub, this.opts.prefix, deployment).then(
      () => (this.clashing = false),
      (err: unknown) => {
        if (this.closed) return; // a claim cut by close(): nothing to report
        const clash = err instanceof DeploymentClashError;
        if (clash && !this.clashing) (this.opts.onClash ?? this.opts.onError)?.(err);
        else if (!clash) this.opts.onError?.(err);
        this.clashing = clash;
      },
    );
  }

  static async open(url: string, opts: RedisBusOptions): Promise<RedisBus> {
    // Back when both connections are: one of them ready again while the other still reconnects is no end of the outage.
    let connections: Redis[] = [];
    const back = () => {
      if (connections.every((r) => r.status === 'ready')) opts.onRecovered?.();
    };
    const pub = await connectRedis(url, 'commands', opts.onError, back);
    const sub = await connectRedis(url, 'subscriber', opts.onError, back).catch((err) => {
      pub.disconnect();
      throw err;
    });
    connections = [pub, sub];
    const bus = new RedisBus(pub, sub, opts);
    try {
      if (opts.deployment !== undefined) await claimPrefix(pub, opts.prefix, opts.deployment);
      await sub.subscribe(bus.control);
      bus.keepClaiming();
    } catch (err) {
      // Both connections go with the failed open: a cluster worker tries again (startup.ts), and would leak two per attempt.
      pub.disconnect();
      sub.disconnect();
      throw err;
    }
    return bus;
  }

  /** The command connection, shared with the APQ registry. */
  get commands(): Redis {
    return this.pub;
  }

  private channel(orderId: number): string {
    return `${this.opts.prefix}order:${orderId}`;
  }

  private send(channel: string, wire: Wire): void {
    if (this.closed) return;
    const tagged: Wire = this.opts.deployment === undefined ? wire : { ...wire, dep: this.opts.deployment };
    this.pub.publish(channel, JSON.stringify(tagged)).catch((err) => this.opts.onError?.(err));
  }

  /**
   * A message on one of its channels. Anything may be published there (another program, an
   * older release): what is not this bus's wire format is dropped (`onDropped`), and a failure
   * of a handler is reported (`onError`). ioredis throws a listener's exception on the next
   * tick, which would end every subscribed process at once.
   */
  private receive(channel: string, message: string): void {
    let wire: unknown;
    try {
      wire = JSON.parse(message);
    } catch {
      wire = undefined;
    }
    if (!isWire(wire)) {
      const dropped = new Error(`not a message of this bus on ${channel}: ${message.slice(0, 200)}`);
      return void (this.opts.onDropped ?? this.opts.onError)?.(dropped);
    }
    try {
      if (wire.from === this.id) return;
      // Another deployment's news (the prefix's claim was lost with a flushed Redis): not ours.
      if (wire.dep !== undefined && wire.dep !== this.opts.deployment) return; // (untagged: an instance of an older release, during a rolling upgrade)
      if ('catchUp' in wire) this.catchUp();
      else if (channel !== this.control) this.handlers?.event(wire.event);
    } catch (err) {
      this.opts.onError?.(err);
    }
  }

  private catchUp(): void {
    this.opts.onCatchUp?.();
    this.handlers?.reconnected();
  }

  listen(handlers: BusHandlers): void {
    this.handlers = handlers;
  }

  publish(event: OrderEvent): void {
    this.handlers?.event(event);
    this.send(this.channel(event.orderId), { from: this.id, event });
  }

  /**
   * Subscribes to the order's channel. With Redis down the SUBSCRIBE waits in the subscriber
   * connection's queue and goes out when Redis is back, and this resolves at once (or after
   * WATCH_WAIT_MS, when Redis stopped answering mid-way): the topic loads from the store and
   * its subscribers are served what this instance writes, rather than waiting without limit.
   * What other instances wrote meanwhile comes with the catch-up of the reconnection
   * (`reconnected`), and the hub's reconciliation.
   */
  async watch(orderId: number): Promise<void> {
    let answered = false;
    const subscribing = this.sub.subscribe(this.channel(orderId)).then(
      () => {
        answered = true;
        this.subStalled = false;
      },
      (err: unknown) => this.opts.onError?.(err),
    );
    // A Redis that keeps the connection but stopped answering made one watch wait: until it
    // answers again (any SUBSCRIBE, or a reconnect), later watches do not wait for it either.
    if (this.sub.status !== 'ready' || this.subStalled) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([subscribing, new Promise<void>((r) => (timer = setTimeout(r, WATCH_WAIT_MS)))]);
    clearTimeout(timer);
    if (!answered) this.subStalled = true;
  }

  unwatch(orderId: number): void {
    if (this.closed) return;
    this.sub.unsubscribe(this.channel(orderId)).catch((err) => this.opts.onError?.(err));
  }

  async ping(): Promise<boolean> {
    if (this.sub.status !== 'ready') return false;
    return this.pub.ping().then(
      (r) => r === 'PONG',
      () => false,
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.handlers = undefined;
    clearInterval(this.claimTimer);
    await Promise.all([this.sub, this.pub].map((r) => r.quit().catch(() => r.disconnect())));
  }
}
