/**
 * The embedded bus: one process, so publishing is a function call. Nothing is ever
 * lost, so `reconnected` is never called.
 */
import type { OrderEvent } from '../store';
import type { Bus, BusHandlers } from './bus';

export class MemoryBus implements Bus {
  readonly kind = 'memory';
  private handlers: BusHandlers | undefined;

  listen(handlers: BusHandlers): void {
    this.handlers = handlers;
  }

  publish(event: OrderEvent): void {
    this.handlers?.event(event);
  }

  async watch(): Promise<void> {}

  unwatch(): void {}

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.handlers = undefined;
  }
}
