import fc from 'fast-check';
import { BrowserWs, PingingWs as PingWs } from './testing/pingingWs';
import {
  DEFAULT_BACKOFF,
  MAX_RETRY_AFTER_S,
  Reconnects,
  SCHEDULED_REFUSALS,
  SSE_IDLE_TIMEOUT_MS,
  WS_IDLE_TIMEOUT_MS,
  parseRetryAfter,
  reconnectDelay,
  refusalRetryAfter,
  retryDelay,
  streamOrder,
  type WebSocketLike,
} from './realtime';

describe('reconnectDelay', () => {
  it('is base x 2^attempt + random(0, base), capped (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 600_000 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (attempt, baseMs, capMs, r) => {
        const d = reconnectDelay(attempt, { baseMs, capMs }, () => r);
        expect(d).toBeCloseTo(Math.min(capMs, baseMs * 2 ** attempt + r * baseMs), 6);
        expect(d).toBeLessThanOrEqual(capMs);
      }),
    );
  });

  it('jitters the first reconnect too: a fleet dropped at once spreads over [base, 2 x base)', () => {
    const delays = Array.from({ length: 1000 }, () => reconnectDelay(0, { baseMs: 100, capMs: 10_000 }));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(100);
    expect(Math.max(...delays)).toBeLessThan(200);
    expect(new Set(delays.map((d) => Math.floor(d / 10))).size).toBeGreaterThan(5);
  });
});

describe('streamOrder follows the wire rule', () => {
  /** A WebSocket the test drives: it records what the client sends and delivers what the test pushes. */
  class FakeWs implements WebSocketLike {
    static last: FakeWs;
    readyState = 1;
    sent: unknown[] = [];
    onopen: ((ev: unknown) => void) | null = null;
    onmessage: ((ev: { data: unknown }) => void) | null = null;
    onclose: ((ev: { code: number; reason: string }) => void) | null = null;
    onerror: ((ev: unknown) => void) | null = null;
    constructor(readonly url: string) {
      FakeWs.last = this;
      queueMicrotask(() => this.onopen?.({}));
    }
    send(data: string) {
      this.sent.push(JSON.parse(data));
    }
    close() {}
    push(msg: unknown) {
      this.onmessage?.({ data: JSON.stringify(msg) });
    }
  }
  const flush = () => new Promise((r) => setTimeout(r, 0));
  const order = { id: 1, status: 'pending' };
  const fakeFetch = (revision: number) => (async () => new Response(JSON.stringify(order), { headers: { etag: `"1-${revision}-v2"` } })) as unknown as typeof fetch;
  const event = (seq: number) => ({ type: 'order.updated', channel: 'order:1', seq, status: 'pending', order });

  it('a resync lower than its since (since ahead of the topic) is adopted: later events are delivered, not dropped', async () => {
    const seen: number[] = [];
    const resyncs: unknown[] = [];
    const s = streamOrder({ baseUrl: 'http://x', token: 't', orderId: 1, transport: 'ws', since: 10, WebSocket: FakeWs, fetch: fakeFetch(3), onEvent: (m) => seen.push(m.seq), onResync: (o) => resyncs.push(o) });
    await flush();
    expect(FakeWs.last.sent).toEqual([{ type: 'subscribe', channel: 'order:1', since: 10 }]);
    FakeWs.last.push({ type: 'subscribed', channel: 'order:1', seq: 10, head: 3 });
    FakeWs.last.push({ type: 'resync', channel: 'order:1', seq: 3, reason: 'since_ahead' });
    FakeWs.last.push(event(4));
    await flush();
    await flush();
    expect(resyncs).toHaveLength(1);
    expect(seen).toEqual([4]);
    expect(s.lastSeq).toBe(4);
    s.close();
  });

  it('since 0 is sent (seen nothing) and subscribed.seq is not taken for an event', async () => {
    const seen: number[] = [];
    const s = streamOrder({ baseUrl: 'http://x', token: 't', orderId: 1, transport: 'ws', since: 0, WebSocket: FakeWs, fetch: fakeFetch(1), onEvent: (m) => seen.push(m.seq) });
    await flush();
    expect(FakeWs.last.sent).toEqual([{ type: 'subscribe', channel: 'order:1', since: 0 }]);
    FakeWs.last.push({ type: 'subscribed', channel: 'order:1', seq: 0, head: 2 });
    FakeWs.last.push(event(1));
    FakeWs.last.push(event(2));
    await flush();
    expect(seen).toEqual([1, 2]);
    s.close();
  });

  it('without since: live from the head the subscribed message gives, and resumes from it', async () => {
    const seen: number[] = [];
    const s = streamOrder({ baseUrl: 'http://x', token: 't', orderId: 1, transport: 'ws', WebSocket: FakeWs, fetch: fakeFetch(5), onEvent: (m) => seen.push(m.seq) });
    await flush();
    expect(FakeWs.last.sent).toEqual([{ type: 'subscribe', channel: 'order:1' }]);
    FakeWs.last.push({ type: 'subscribed', channel: 'order:1', seq: 5, head: 5 });
    FakeWs.last.push(event(6));
    await flush();
    expect(seen).toEqual([6]);
    expect(s.lastSeq).toBe(6);
    s.close();
  });
});

describe('streamOrder honours the Retry-After of a refused connect', () => {
  afterEach(() => {
    jest.useRealTimers();
    RefusedWs.retryAfters = [];
  });
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };

  /**
   * A `ws`-like socket whose upgrade the server refuses with 503 and Retry-After: 7, or, when
   * `retryAfters` holds any, the next of them (undefined: a 503 without one).
   */
  class RefusedWs implements WebSocketLike {
    static made = 0;
    static retryAfters: (string | undefined)[] = [];
    readyState = 0;
    onopen: ((ev: unknown) => void) | null = null;
    onmessage: ((ev: { data: unknown }) => void) | null = null;
    onclose: ((ev: { code: number; reason: string }) => void) | null = null;
    onerror: ((ev: unknown) => void) | null = null;
    private refused?: (req: unknown, res: { statusCode?: number; headers: { 'retry-after'?: string } }) => void;
    constructor(readonly url: string) {
      RefusedWs.made++;
      const retryAfter = RefusedWs.retryAfters.length > 0 ? RefusedWs.retryAfters.shift() : '7';
      queueMicrotask(() => this.refused?.({}, { statusCode: 503, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } }));
    }
    once(_event: 'unexpected-response', listener: (req: unknown, res: { statusCode?: number; headers: { 'retry-after'?: string } }) => void) {
      this.refused = listener;
      return this;
    }
    send() {}
    close() {
      queueMicrotask(() => this.onclose?.({ code: 1006, reason: '' }));
    }
  }

  it('WebSocket (Node ws): connects again after Retry-After seconds, not after its shorter backoff', async () => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    RefusedWs.made = 0;
    const s = streamOrder({ baseUrl: 'http://x', token: 't', orderId: 1, transport: 'ws', WebSocket: RefusedWs, random: () => 0, backoff: { baseMs: 100, capMs: 60_000 }, onEvent: () => undefined });
    await settle();
    expect(RefusedWs.made).toBe(1);
    jest.advanceTimersByTime(6_999); // the backoff alone would have reconnected after 100 ms
    await settle();
    expect(RefusedWs.made).toBe(1);
    jest.advanceTimersByTime(1);
    await settle();
    expect(RefusedWs.made).toBe(2);
    s.close();
  });

  it('WebSocket: comes back when Retry-After says even when its backoff is longer, and such refusals do not lengthen the backoff', async () => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    RefusedWs.made = 0;
    // Three refusals saying 1 s, then one saying nothing: the backoff (base 3 s) applies to that one only, uncounted refusals before it.
    RefusedWs.retryAfters = ['1', '1', '1', undefined];
    const s = streamOrder({ baseUrl: 'http://x', token: 't', orderId: 1, transport: 'ws', WebSocket: RefusedWs, random: () => 0, backoff: { baseMs: 3000, capMs: 60_000 }, onEvent: () => undefined });
    await settle();
    for (let made = 1; made <= 3; made++) {
      expect(RefusedWs.made).toBe(made);
      jest.advanceTimersByTime(1000);
      await settle();
    }
    expect(RefusedWs.made).toBe(4);
    jest.advanceTimersByTime(2999);
    await settle();
    expect(RefusedWs.made).toBe(4);
    jest.advanceTimersByTime(1); // base x 2^0: the refusals before did not count
    await settle();
    expect(RefusedWs.made).toBe(5);
    s.close();
  });

  it('WebSocket: a server that keeps refusing "1 s" is backed off from after SCHEDULED_REFUSALS refusals', async () => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    RefusedWs.made = 0;
    RefusedWs.retryAfters = Array<string>(SCHEDULED_REFUSALS + 2).fill('1');
    const s = streamOrder({ baseUrl: 'http://x', token: 't', orderId: 1, transport: 'ws', WebSocket: RefusedWs, random: () => 0, backoff: { baseMs: 3000, capMs: 60_000 }, onEvent: () => undefined });
    await settle();
    const gaps: number[] = [];
    let last = 0;
    for (let t = 1; RefusedWs.made <= SCHEDULED_REFUSALS + 2; t++) {
      const made = RefusedWs.made;
      jest.advanceTimersByTime(1000);
      await settle();
      if (RefusedWs.made > made) {
        gaps.push(t - last);
        last = t;
      }
    }
    // Four times as said (1 s), then the longer of the backoff and Retry-After: 3 s, then 6 s.
    expect(gaps).toEqual([...Array<number>(SCHEDULED_REFUSALS).fill(1), 3, 6]);
    s.close();
  });

  it('SSE: connects again after Retry-After seconds', async () => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    let calls = 0;
    const refusing = (async () => {
      calls++;
      return new Response('{}', { status: 503, headers: { 'retry-after': '4', 'content-type': 'application/problem+json' } });
    }) as unknown as typeof fetch;
    const s = streamOrder({ baseUrl: 'http://x', token: 't', orderId: 1, transport: 'sse', fetch: refusing, random: () => 0, backoff: { baseMs: 100, capMs: 60_000 }, onEvent: () => undefined });
    await settle();
    expect(calls).toBe(1);
    jest.advanceTimersByTime(3_999);
    await settle();
    expect(calls).toBe(1);
    jest.advanceTimersByTime(1);
    await settle();
    expect(calls).toBe(2);
    s.close();
  });

  it.each([
    [503, '0.001'], // not delay-seconds: no Retry-After
    [500, '4'], // a 500 does not schedule anything
  ])('SSE: a %i with Retry-After %s is waited out with the backoff alone', async (status, retryAfter) => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    let calls = 0;
    const refusing = (async () => {
      calls++;
      return new Response('{}', { status, headers: { 'retry-after': retryAfter, 'content-type': 'application/problem+json' } });
    }) as unknown as typeof fetch;
    const s = streamOrder({ baseUrl: 'http://x', token: 't', orderId: 1, transport: 'sse', fetch: refusing, random: () => 0, backoff: { baseMs: 100, capMs: 60_000 }, onEvent: () => undefined });
    await settle();
    for (const backoff of [100, 200, 400]) {
      const before = calls;
      jest.advanceTimersByTime(backoff - 1);
      await settle();
      expect(calls).toBe(before);
      jest.advanceTimersByTime(1);
      await settle();
      expect(calls).toBe(before + 1);
    }
    s.close();
  });
});

describe('retryDelay and parseRetryAfter', () => {
  it('retryDelay is the backoff, or Retry-After plus random(0, 1 s) when that is longer (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 }), fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (attempt, after, r) => {
        const backoff = reconnectDelay(attempt, DEFAULT_BACKOFF, () => r);
        const d = retryDelay(attempt, after, DEFAULT_BACKOFF, () => r);
        expect(d).toBeGreaterThanOrEqual(backoff);
        if (after) expect(d).toBeGreaterThanOrEqual(after * 1000);
        if (after) expect(d).toBeLessThan(Math.max(backoff, (after + 1) * 1000) + 1e-6);
      }),
    );
  });

  it('Reconnects: refusals with Retry-After are waited out as said and not counted, up to SCHEDULED_REFUSALS since the last success; then the backoff applies too (generated)', () => {
    const ending = fc.oneof(fc.constant('connected' as const), fc.constant(undefined), fc.integer({ min: 1, max: 7200 }));
    fc.assert(
      fc.property(fc.array(ending, { maxLength: 30 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (endings, r) => {
        const reconnects = new Reconnects(DEFAULT_BACKOFF, () => r);
        let counted = 0;
        let scheduled = 0;
        for (const e of endings) {
          if (e === 'connected') {
            reconnects.reset();
            counted = scheduled = 0;
            continue;
          }
          const d = reconnects.next(e);
          expect(d).toBeLessThanOrEqual(MAX_RETRY_AFTER_S * 1000);
          if (e !== undefined && scheduled < SCHEDULED_REFUSALS) {
            scheduled++;
            expect(d).toBe(Math.min(MAX_RETRY_AFTER_S * 1000, (e + r) * 1000)); // as said, whatever the backoff
          } else {
            expect(d).toBeGreaterThanOrEqual(
              Math.min(
                MAX_RETRY_AFTER_S * 1000,
                reconnectDelay(counted, DEFAULT_BACKOFF, () => r),
              ),
            );
            counted++;
          }
          expect(reconnects.attempt).toBe(counted);
        }
      }),
    );
  });

  it('refusalRetryAfter: a 503 or 429 refusal schedules the next attempt; other statuses do not', () => {
    expect(refusalRetryAfter(503, '3')).toBe(3);
    expect(refusalRetryAfter(429, ['2', '9'])).toBe(2);
    expect(refusalRetryAfter(500, '3')).toBeUndefined();
    expect(refusalRetryAfter(undefined, '3')).toBeUndefined();
    expect(refusalRetryAfter(503, null)).toBeUndefined();
  });

  it('reads delta-seconds and HTTP-dates, bounded; anything else is no Retry-After', () => {
    expect(parseRetryAfter('7')).toBe(7);
    expect(parseRetryAfter(' 12 ')).toBe(12);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10);
    expect(parseRetryAfter('999999')).toBe(MAX_RETRY_AFTER_S);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('1.5')).toBeUndefined(); // not delay-seconds, and not a date either (Date.parse would say 2001)
    expect(parseRetryAfter('0.001')).toBeUndefined();
    expect(parseRetryAfter('-3')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('streamOrder drops a connection on which nothing arrives (idleTimeoutMs)', () => {
  afterEach(() => jest.useRealTimers());
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };

  const event = (seq: number) => ({ type: 'order.updated', channel: 'order:1', seq, status: 'paid', order: { id: 1 } });

  it('WebSocket with ws: pings and messages keep it; 75 s of silence drops it (terminate) and resumes from the last seq', async () => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    PingWs.made = [];
    const seen: number[] = [];
    const s = streamOrder({ baseUrl: 'http://x', token: 't', orderId: 1, transport: 'ws', since: 0, WebSocket: PingWs, random: () => 0, backoff: { baseMs: 100, capMs: 1000 }, onEvent: (m) => seen.push(m.seq) });
    await settle();
    const first = PingWs.made[0];
    first.push({ type: 'subscribed', channel: 'order:1', seq: 0, head: 1 });
    first.push(event(1));
    for (let i = 0; i < 5; i++) {
      await jest.advanceTimersByTimeAsync(WS_IDLE_TIMEOUT_MS - 1);
      first.ping(); // the server's ping, every 30 s: alive however long the order stays quiet
    }
    expect(first.terminated).toBe(false);
    await jest.advanceTimersByTimeAsync(WS_IDLE_TIMEOUT_MS);
    expect(first.terminated).toBe(true);
    await jest.advanceTimersByTimeAsync(100);
    expect(PingWs.made).toHaveLength(2);
    expect(PingWs.made[1].sent).toEqual([{ type: 'subscribe', channel: 'order:1', since: 1 }]);
    expect(seen).toEqual([1]);
    s.close();
  });

  it('WebSocket without visible pings (browsers): no default watchdog, a quiet order keeps its connection', async () => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    PingWs.made = [];
    const s = streamOrder({ baseUrl: 'http://x', token: 't', orderId: 1, transport: 'ws', WebSocket: BrowserWs, onEvent: () => undefined });
    await settle();
    await jest.advanceTimersByTimeAsync(10 * WS_IDLE_TIMEOUT_MS);
    expect(PingWs.made).toHaveLength(1);
    s.close();
  });

  it('SSE: the `: ping` comments keep it; 45 s without a byte aborts it and it resumes with Last-Event-ID', async () => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    const enc = new TextEncoder();
    const streams: { push(text: string): void; aborted: boolean }[] = [];
    const lastEventIds: (string | null)[] = [];
    const fetchStream = (async (_input: unknown, init?: RequestInit) => {
      lastEventIds.push(new Headers(init?.headers).get('last-event-id'));
      let controller!: ReadableStreamDefaultController<Uint8Array>;
      const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
      const entry = { push: (text: string) => controller.enqueue(enc.encode(text)), aborted: false };
      init?.signal?.addEventListener('abort', () => {
        entry.aborted = true;
        controller.error(new DOMException('aborted', 'AbortError'));
      });
      streams.push(entry);
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }) as unknown as typeof fetch;
    const seen: number[] = [];
    const s = streamOrder({ baseUrl: 'http://x', token: 't', orderId: 1, transport: 'sse', since: 0, fetch: fetchStream, random: () => 0, backoff: { baseMs: 100, capMs: 1000 }, onEvent: (m) => seen.push(m.seq) });
    await settle();
    streams[0].push(`id: 1\nevent: order.updated\ndata: ${JSON.stringify(event(1))}\n\n`);
    for (let i = 0; i < 5; i++) {
      await jest.advanceTimersByTimeAsync(SSE_IDLE_TIMEOUT_MS - 1);
      streams[0].push(': ping\n\n');
    }
    await settle();
    expect(streams[0].aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(SSE_IDLE_TIMEOUT_MS);
    expect(streams[0].aborted).toBe(true);
    await jest.advanceTimersByTimeAsync(100);
    expect(lastEventIds).toEqual(['0', '1']);
    expect(seen).toEqual([1]);
    s.close();
  });

  it('idleTimeoutMs: 0 turns it off', async () => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick'] });
    PingWs.made = [];
    const s = streamOrder({ baseUrl: 'http://x', token: 't', orderId: 1, transport: 'ws', WebSocket: PingWs, idleTimeoutMs: 0, onEvent: () => undefined });
    await settle();
    await jest.advanceTimersByTimeAsync(10 * WS_IDLE_TIMEOUT_MS);
    expect(PingWs.made).toHaveLength(1);
    expect(PingWs.made[0].terminated).toBe(false);
    s.close();
  });
});
