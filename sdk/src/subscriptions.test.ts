import { WS_IDLE_TIMEOUT_MS, type WebSocketLike } from './realtime';
import { subscribeOperation } from './subscriptions';

/** A `ws`-like graphql-transport-ws peer the test drives: it shows pings and records what the client sends. */
class GqlWs implements WebSocketLike {
  static all: GqlWs[] = [];
  readyState = 1;
  sent: { type?: string; payload?: { variables?: Record<string, unknown> } }[] = [];
  terminated = false;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  private pingListener: () => void = () => undefined;
  constructor(
    readonly url: string,
    readonly protocol: string,
  ) {
    GqlWs.all.push(this);
    queueMicrotask(() => this.onopen?.({}));
  }
  on(_event: 'ping', listener: () => void): unknown {
    this.pingListener = listener;
    return this;
  }
  ping() {
    this.pingListener();
  }
  push(msg: unknown) {
    this.onmessage?.({ data: JSON.stringify(msg) });
  }
  send(data: string) {
    this.sent.push(JSON.parse(data) as GqlWs['sent'][number]);
    const msg = JSON.parse(data) as { type: string };
    if (msg.type === 'connection_init') queueMicrotask(() => this.push({ type: 'connection_ack' }));
  }
  terminate() {
    this.terminated = true;
    queueMicrotask(() => this.onclose?.({ code: 1006, reason: '' }));
  }
  close() {
    queueMicrotask(() => this.onclose?.({ code: 1000, reason: '' }));
  }
}

const event = (seq: number) => ({ id: '1', type: 'next', payload: { data: { orderEvents: { seq, type: 'order.updated', resync: null, order: null } } } });

describe('GraphQL subscribe drops a silent connection (idleTimeoutMs)', () => {
  afterEach(() => jest.useRealTimers());

  it('with ws: pings keep it; 75 s of silence cuts it, and it resubscribes with since = the last seq', async () => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    GqlWs.all = [];
    const seqs: number[] = [];
    const sub = subscribeOperation(
      { baseUrl: 'http://x', token: 't', WebSocket: GqlWs, random: () => 0, backoff: { baseMs: 100, capMs: 1000 } },
      'OrderEventsV2',
      { id: '1', since: 0 },
      { next: (d) => seqs.push(d.orderEvents.seq) },
    );
    await jest.advanceTimersByTimeAsync(0);
    const first = GqlWs.all[0];
    first.push(event(1));
    for (let i = 0; i < 4; i++) {
      await jest.advanceTimersByTimeAsync(WS_IDLE_TIMEOUT_MS - 1);
      first.ping();
    }
    expect(first.terminated).toBe(false);
    await jest.advanceTimersByTimeAsync(WS_IDLE_TIMEOUT_MS);
    expect(first.terminated).toBe(true);
    await jest.advanceTimersByTimeAsync(200);
    expect(GqlWs.all).toHaveLength(2);
    expect(GqlWs.all[1].sent.find((m) => m.type === 'subscribe')?.payload?.variables).toMatchObject({ id: '1', since: 1 });
    expect(seqs).toEqual([1]);
    sub.close();
  });
});
