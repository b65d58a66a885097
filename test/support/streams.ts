/** Test clients for the realtime endpoints: an SSE reader over fetch and a WebSocket message queue. */
import WebSocket from 'ws';
import type { TestServer } from './server';
import type { Store } from '../../src/store';

/** What the helpers need of a server: an in-process test server or a spawned instance. */
export interface StreamTarget {
  url: string;
  fetch: TestServer['fetch'];
  alice: { token: string };
}

export interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

export class SseReader {
  private buffer = '';
  private readonly events: SseEvent[] = [];
  private waiters: (() => void)[] = [];
  ended = false;
  readonly done: Promise<void>;

  constructor(readonly res: Response) {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    this.done = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          this.buffer += decoder.decode(value, { stream: true });
          let cut: number;
          while ((cut = this.buffer.indexOf('\n\n')) >= 0) {
            const block = this.buffer.slice(0, cut);
            this.buffer = this.buffer.slice(cut + 2);
            const ev: SseEvent = {};
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) ev.comment = line.slice(1).trim();
              else {
                const i = line.indexOf(':');
                const [k, v] = [line.slice(0, i), line.slice(i + 1).replace(/^ /, '')];
                (ev as Record<string, string>)[k] = v;
              }
            }
            this.events.push(ev);
          }
          this.wake();
        }
      } catch {
        // aborted or destroyed
      }
      this.ended = true;
      this.wake();
    })();
  }

  private wake() {
    const w = this.waiters;
    this.waiters = [];
    w.forEach((f) => f());
  }

  /** Waits until `n` events (not counting retry-only blocks and comments) have arrived. */
  async take(n: number, ms = 5000): Promise<SseEvent[]> {
    const deadline = Date.now() + ms;
    for (;;) {
      const got = this.events.filter((e) => e.data !== undefined);
      if (got.length >= n) return got.slice(0, n);
      if (this.ended || Date.now() > deadline) throw new Error(`SSE: wanted ${n} events, got ${got.length}${this.ended ? ' (ended)' : ''}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  all(): SseEvent[] {
    return [...this.events];
  }
}

export async function openSse(srv: StreamTarget, orderId: number, headers: Record<string, string> = {}, as: 'alice' | 'bob' | 'anonymous' = 'alice', read = true) {
  const abort = new AbortController();
  const res = await srv.fetch(`/api/orders/${orderId}/stream`, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal, as });
  return { res, reader: res.ok && read ? new SseReader(res) : undefined, close: () => abort.abort() };
}

export class WsClient {
  readonly messages: Record<string, unknown>[] = [];
  closeCode?: number;
  closeReason?: string;
  private waiters: (() => void)[] = [];

  constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => {
      this.messages.push(JSON.parse((d as Buffer).toString()) as Record<string, unknown>);
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closeCode = code;
      this.closeReason = String(reason);
      this.wake();
    });
  }

  private wake() {
    const w = this.waiters;
    this.waiters = [];
    w.forEach((f) => f());
  }

  async until(pred: (msgs: Record<string, unknown>[]) => boolean, ms = 5000): Promise<Record<string, unknown>[]> {
    const deadline = Date.now() + ms;
    while (!pred(this.messages)) {
      if (Date.now() > deadline) throw new Error(`WS: condition not met; got ${JSON.stringify(this.messages).slice(0, 500)}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
    return this.messages;
  }

  async closed(ms = 5000): Promise<number> {
    const deadline = Date.now() + ms;
    while (this.closeCode === undefined) {
      if (Date.now() > deadline) throw new Error('WS: not closed');
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
    return this.closeCode;
  }

  send(msg: unknown) {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
  }
}

export function openWs(srv: StreamTarget, query = '', token: string | null = srv.alice.token): Promise<WsClient | { status: number; headers: Record<string, string | string[] | undefined> }> {
  const url = `${srv.url.replace('http', 'ws')}/orders${query ? `?${query}` : ''}`;
  const ws = new WebSocket(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  const client = new WsClient(ws);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    ws.once('error', reject);
  });
}

/** Creates an order for Alice and returns its id and ETag. */
export async function createOrder(srv: StreamTarget, body: unknown = {}, as: 'alice' | 'bob' = 'alice'): Promise<{ id: number; etag: string }> {
  const res = await srv.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), as });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
  return { id: ((await res.json()) as { id: number }).id, etag: res.headers.get('etag')! };
}

/** Makes every touch's note new: a PATCH that changes nothing is not an event (two calls in one millisecond once made one). */
let touches = 0;

/** Applies `n` note changes (If-Match: *). */

export async function touch(srv: StreamTarget, id: number, n: number, as: 'alice' | 'bob' = 'alice'): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await srv.fetch(`/orders/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json', 'if-match': '*' }, body: JSON.stringify({ note: `touch ${++touches}` }), as });
    if (res.status !== 200) throw new Error(`patch: ${res.status} ${await res.text()}`);
  }
}

/**
 * Holds every token read of `store` (the auth check of a token not yet cached) until
 * `release()`; `entered` resolves when the first one arrives. For tests of what happens
 * while a stream's check waits on the store.
 */
export function holdTokenReads(store: Pick<Store, 'tokenBySelector'>): { entered: Promise<void>; release: (failWith?: Error) => void } {
  let arrived!: () => void;
  const entered = new Promise<void>((r) => (arrived = r));
  let open!: (failWith: Error | undefined) => void;
  const gate = new Promise<Error | undefined>((r) => (open = r));
  const read = store.tokenBySelector.bind(store);
  store.tokenBySelector = async (selector) => {
    arrived();
    const failure = await gate;
    if (failure) throw failure;
    return read(selector);
  };
  return { entered, release: (failWith) => open(failWith) };
}
