/**
 * The Bus port: how a committed event reaches the topic hub of every instance.
 *
 * The bus only carries events; it is not where they live. Every event is a row of the
 * event table, written in the same transaction as the change (the transactional
 * outbox: every change of an order yields exactly one event), and that table is the replay ring's source: a hub
 * loads a topic's ring from it and reads back any seq the bus did not bring. So the bus
 * may be at-most-once (Redis pub/sub is): a lost message delays a frame until the next
 * event or reconnect on that topic, never drops it. What the bus must say is when
 * it may have lost messages (`reconnected`), so hubs read what they missed.
 */
import type { OrderEvent } from '../store';

export interface BusHandlers {
  /** An event committed on some instance, this one included. May repeat or come out of order. */
  event(event: OrderEvent): void;
  /** Messages may have been lost (the connection dropped and is back, or a peer's publish failed): read the event table. */
  reconnected(): void;
}

export interface Bus {
  readonly kind: 'memory' | 'redis';
  /**
   * Sends a committed event to every instance watching its topic, this instance first
   * and synchronously. Never throws: a failure is reported through the adapter's
   * `onError`, and the receivers' catch-up on reconnect makes it good.
   */
  publish(event: OrderEvent): void;
  /** Events of this order's topic reach `event` once the promise resolves. */
  watch(orderId: number): Promise<void>;
  unwatch(orderId: number): void;
  /** Set once, by the realtime tier. */
  listen(handlers: BusHandlers): void;
  /**
   * Readiness probe: true when the bus can carry messages. A true answer also says that
   * every publish made before the call has reached the engine (Redis: PING follows PUBLISH
   * on the one command connection), which the shared adapter suite uses as a barrier.
   */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
