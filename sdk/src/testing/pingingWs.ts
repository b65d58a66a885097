/**
 * Test support (not part of the package: sdk/tsconfig.json leaves src/testing out): a
 * `ws`-like WebSocket a test drives. It opens on the next microtask, shows the server's
 * pings (`ping()`), delivers what the test pushes, records what the client sends, and
 * records whether it was cut (`terminate`) or closed.
 */
import type { WebSocketLike } from '../realtime.js';

export class PingingWs implements WebSocketLike {
  static made: PingingWs[] = [];
  readyState = 1;
  sent: unknown[] = [];
  terminated = false;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  private pingListener: () => void = () => undefined;

  constructor(
    readonly url: string,
    readonly protocol?: string,
  ) {
    PingingWs.made.push(this);
    queueMicrotask(() => this.onopen?.({}));
  }

  on(_event: 'ping', listener: () => void): unknown {
    this.pingListener = listener;
    return this;
  }

  /** A ping frame from the server. */
  ping(): void {
    this.pingListener();
  }

  /** A message from the server. */
  push(msg: unknown): void {
    this.onmessage?.({ data: JSON.stringify(msg) });
  }

  send(data: string): void {
    this.sent.push(JSON.parse(data));
  }

  terminate(): void {
    this.terminated = true;
    queueMicrotask(() => this.onclose?.({ code: 1006, reason: '' }));
  }

  close(): void {
    queueMicrotask(() => this.onclose?.({ code: 1005, reason: '' }));
  }
}

/** The same without `on` and `terminate`: a browser's WebSocket, which shows no pings to scripts. */
export class BrowserWs extends PingingWs {
  override on = undefined as unknown as PingingWs['on'];
  override terminate = undefined as unknown as PingingWs['terminate'];
}
