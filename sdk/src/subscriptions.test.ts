import { WS_IDLE_TIMEOUT_MS } from './realtime';
import { PingingWs } from './testing/pingingWs';
import { subscribeOperation } from './subscriptions';

/** A graphql-transport-ws peer: it acknowledges connection_init as the server does. */
class GqlWs extends PingingWs {
  override send(data: string): void {
    super.send(data);
    if ((JSON.parse(data) as { type?: string }).type === 'connection_init') queueMicrotask(() => this.push({ type: 'connection_ack' }));
  }
}
const sentOf = (ws: PingingWs) => ws.sent as { type?: string; payload?: { variables?: Record<string, unknown> } }[];

const event = (seq: number) => ({ id: '1', type: 'next', payload: { data: { orderEvents: { seq, type: 'order.updated', resync: null, order: null } } } });

describe('GraphQL subscribe drops a silent connection (idleTimeoutMs)', () => {
  afterEach(() => jest.useRealTimers());

  it('with ws: pings keep it; 75 s of silence cuts it, and it resubscribes with since = the last seq', async () => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    PingingWs.made = [];
    const seqs: number[] = [];
    const sub = subscribeOperation(
      { baseUrl: 'http://x', token: 't', WebSocket: GqlWs, random: () => 0, backoff: { baseMs: 100, capMs: 1000 } },
      'OrderEventsV2',
      { id: '1', since: 0 },
      { next: (d) => seqs.push(d.orderEvents.seq) },
    );
    await jest.advanceTimersByTimeAsync(0);
    const first = PingingWs.made[0];
    first.push(event(1));
    for (let i = 0; i < 4; i++) {
      await jest.advanceTimersByTimeAsync(WS_IDLE_TIMEOUT_MS - 1);
      first.ping();
    }
    expect(first.terminated).toBe(false);
    await jest.advanceTimersByTimeAsync(WS_IDLE_TIMEOUT_MS);
    expect(first.terminated).toBe(true);
    await jest.advanceTimersByTimeAsync(200);
    expect(PingingWs.made).toHaveLength(2);
    expect(sentOf(PingingWs.made[1]).find((m) => m.type === 'subscribe')?.payload?.variables).toMatchObject({ id: '1', since: 1 });
    expect(seqs).toEqual([1]);
    sub.close();
  });
});

describe("GraphQL subscribe on Node 22's WebSocket", () => {
  it('resubscribes after a connection that fired only `error` (undici 6 fires no `close` when it cannot open)', async () => {
    /** The first connection fails as undici's does: `error`, and no `close` ever. */
    class Undici extends GqlWs {
      constructor(url: string, protocol?: string) {
        super(url, protocol);
        if (PingingWs.made.length === 1) {
          this.onopen = null;
          queueMicrotask(() => {
            this.onopen = null;
            this.onerror?.({});
          });
        }
      }
    }
    PingingWs.made = [];
    const seqs: number[] = [];
    await new Promise<void>((resolve) => {
      const sub = subscribeOperation(
        { baseUrl: 'http://x', token: 't', WebSocket: Undici, random: () => 0, backoff: { baseMs: 1, capMs: 2 } },
        'OrderEventsV2',
        { id: '1', since: 0 },
        {
          next: (d) => (seqs.push(d.orderEvents.seq), sub.close(), resolve()),
          onConnect: (attempt) => {
            if (attempt === 1) setTimeout(() => PingingWs.made[1]?.push(event(1)), 5);
          },
        },
      );
    });
    expect(PingingWs.made).toHaveLength(2);
    expect(seqs).toEqual([1]);
  });
});

describe('GraphQL subscribe refused THROTTLED (the cost budget)', () => {
  afterEach(() => jest.useRealTimers());

  it('waits the retryAfterSeconds the refusal gives, not its backoff, before it subscribes again', async () => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    PingingWs.made = [];
    const sub = subscribeOperation({ baseUrl: 'http://x', token: 't', WebSocket: GqlWs, random: () => 0, backoff: { baseMs: 100, capMs: 1000 } }, 'OrderEventsV2', { id: '1', since: 0 }, { next: () => undefined });
    await jest.advanceTimersByTimeAsync(0);
    PingingWs.made[0].push({ id: '1', type: 'error', payload: [{ message: 'over budget', extensions: { code: 'THROTTLED', retryAfterSeconds: 42 } }] });
    await jest.advanceTimersByTimeAsync(41_000);
    expect(PingingWs.made).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1_100);
    expect(PingingWs.made).toHaveLength(2);
    sub.close();
  });
});

describe('GraphQL subscribe on a platform without WebSocket', () => {
  it('stops with UNSUPPORTED_PLATFORM, as streamOrder does', () => {
    // Node 22 has a global WebSocket; this platform has none.
    const saved = Object.getOwnPropertyDescriptor(globalThis, 'WebSocket');
    Reflect.deleteProperty(globalThis, 'WebSocket');
    try {
      const errors: unknown[] = [];
      subscribeOperation({ baseUrl: 'http://x', token: 't' }, 'OrderEventsV2', { id: '1' }, { next: () => undefined, error: (e) => errors.push(e) });
      expect(errors).toEqual([expect.objectContaining({ code: 'UNSUPPORTED_PLATFORM', status: 0, source: 'graphql' })]);
    } finally {
      if (saved) Object.defineProperty(globalThis, 'WebSocket', saved);
    }
  });
});
