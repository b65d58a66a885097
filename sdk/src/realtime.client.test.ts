/** The realtime client's errors, tokens and cancellation, against a fake SSE endpoint (no server, no timing). */
import { streamOrder } from './realtime';
import { OrderlineError } from './errors';

const sse = (text: string) => new Response(text, { status: 200, headers: { 'content-type': 'text/event-stream' } });
const event = (seq: number) => `id: ${seq}\nevent: order.updated\ndata: ${JSON.stringify({ type: 'order.updated', channel: 'order:7', seq, status: 'paid', order: { id: 7 } })}\n\n`;
const problem = (status: number, code: string) =>
  new Response(JSON.stringify({ type: 'about:blank', title: code, status, code }), { status, headers: { 'content-type': 'application/problem+json', 'x-request-id': 'req-s' } });

describe('realtime client', () => {
  it('hands onFatal an OrderlineError with the status, the code and the request id', async () => {
    const fatal = await new Promise<OrderlineError>((resolve) => {
      streamOrder({ baseUrl: 'http://x.test', token: 'bad', orderId: 7, transport: 'sse', fetch: () => Promise.resolve(problem(401, 'UNAUTHORIZED')), onEvent: () => undefined, onFatal: resolve });
    });
    expect(fatal).toBeInstanceOf(OrderlineError);
    expect(fatal).toMatchObject({ status: 401, code: 'UNAUTHORIZED', requestId: 'req-s', source: 'realtime' });
  });

  it('a 400 over SSE, or invalid_message over WebSocket, stops the stream with onFatal: sending it again cannot help', async () => {
    const sse400 = await new Promise<OrderlineError>((resolve) => {
      streamOrder({ baseUrl: 'http://x.test', orderId: 0, transport: 'sse', fetch: () => Promise.resolve(problem(400, 'VALIDATION_FAILED')), onEvent: () => undefined, onFatal: resolve });
    });
    expect(sse400).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    class Refusing {
      readyState = 0;
      onopen: (() => void) | null = null;
      onmessage: ((ev: { data: unknown }) => void) | null = null;
      onclose: (() => void) | null = null;
      onerror: (() => void) | null = null;
      once() {
        return this;
      }
      constructor() {
        queueMicrotask(() => this.onopen?.());
      }
      send() {
        queueMicrotask(() => this.onmessage?.({ data: JSON.stringify({ type: 'error', channel: 'order:0', seq: null, code: 'invalid_message', message: 'The channel names no order' }) }));
      }
      close() {
        this.onclose?.();
      }
    }
    const ws400 = await new Promise<OrderlineError>((resolve) => {
      streamOrder({ baseUrl: 'http://x.test', orderId: 0, transport: 'ws', WebSocket: Refusing, onEvent: () => undefined, onFatal: resolve });
    });
    expect(ws400).toMatchObject({ status: 400, code: 'invalid_message', source: 'realtime' });
  });

  it('in a browser (no refused-upgrade event), a WebSocket closed before it opened asks the SSE URL why: a 401 is fatal', async () => {
    const asked: string[] = [];
    class Browser {
      readyState = 0;
      onopen: (() => void) | null = null;
      onmessage: ((ev: { data: unknown }) => void) | null = null;
      onclose: (() => void) | null = null;
      onerror: (() => void) | null = null;
      constructor() {
        queueMicrotask(() => (this.onerror?.(), this.onclose?.()));
      }
      send() {}
      close() {}
    }
    const fatal = await new Promise<OrderlineError>((resolve) => {
      streamOrder({
        baseUrl: 'http://x.test',
        token: 'revoked',
        orderId: 7,
        transport: 'ws',
        WebSocket: Browser,
        fetch: (input, init) => (asked.push(`${init?.method ?? 'GET'} ${typeof input === 'string' ? input : input instanceof URL ? input.href : input.url}`), Promise.resolve(problem(401, 'UNAUTHORIZED'))),
        onEvent: () => undefined,
        onFatal: resolve,
      });
    });
    expect(fatal).toMatchObject({ status: 401, code: 'UNAUTHORIZED', requestId: 'req-s' });
    expect(asked).toEqual(['HEAD http://x.test/api/orders/7/stream']);
  });

  it("on Node 22's WebSocket, which fires only `error` when a connection cannot open, the stream retries an outage and a 401 still reaches onFatal", async () => {
    const made: string[] = [];
    /** undici 6: a failed connection fires `error` and never `close`; the third one opens. */
    class Undici {
      readyState = 0;
      onopen: (() => void) | null = null;
      onmessage: ((ev: { data: unknown }) => void) | null = null;
      onclose: (() => void) | null = null;
      onerror: ((ev: unknown) => void) | null = null;
      constructor(url: string) {
        made.push(url);
        queueMicrotask(() => (made.length < 3 ? this.onerror?.({}) : this.onopen?.()));
      }
      send() {
        queueMicrotask(() => this.onmessage?.({ data: JSON.stringify({ type: 'order.updated', channel: 'order:7', seq: 2, status: 'paid', order: { id: 7 } }) }));
      }
      close() {}
    }
    const heads: number[] = [];
    const seq = await new Promise<number>((resolve) => {
      const stream = streamOrder({
        baseUrl: 'http://x.test',
        orderId: 7,
        since: 1,
        transport: 'ws',
        WebSocket: Undici,
        backoff: { baseMs: 1, capMs: 2 },
        // The HEAD asked after each failed connection: no answer (an outage), retried.
        fetch: () => (heads.push(heads.length), Promise.reject(new TypeError('fetch failed'))),
        onEvent: (m) => (stream.close(), resolve(m.seq)),
        onFatal: () => resolve(-1),
      });
    });
    expect(seq).toBe(2);
    expect([made.length, heads.length]).toEqual([3, 2]);

    class Refused extends Undici {
      constructor(url: string) {
        super(url);
        made.length = 0; // never opens
      }
    }
    const fatal = await new Promise<OrderlineError>((resolve) => {
      streamOrder({ baseUrl: 'http://x.test', token: 'revoked', orderId: 7, transport: 'ws', WebSocket: Refused, fetch: () => Promise.resolve(problem(401, 'UNAUTHORIZED')), onEvent: () => undefined, onFatal: resolve });
    });
    expect(fatal).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('asks a token function at every reconnect: a rotated token carries the stream on', async () => {
    const tokens = ['old', 'new'];
    let asked = 0;
    const sent: (string | null)[] = [];
    const seqs: number[] = [];
    await new Promise<void>((resolve) => {
      const stream = streamOrder({
        baseUrl: 'http://x.test',
        token: () => tokens[Math.min(asked++, 1)],
        orderId: 7,
        transport: 'sse',
        since: 1,
        backoff: { baseMs: 1, capMs: 2 },
        // The old token works for one connection; after the drop only the new one is accepted.
        fetch: (_input, init) => {
          const auth = new Headers(init?.headers).get('authorization');
          sent.push(auth);
          if (auth !== `Bearer ${sent.length === 1 ? 'old' : 'new'}`) return Promise.resolve(problem(401, 'UNAUTHORIZED'));
          return Promise.resolve(sse(event(sent.length + 1)));
        },
        onEvent: (m) => {
          seqs.push(m.seq);
          if (seqs.length === 2) {
            stream.close();
            resolve();
          }
        },
        onFatal: (err) => {
          seqs.push(-err.status);
          resolve();
        },
      });
    });
    expect(sent).toEqual(['Bearer old', 'Bearer new']);
    expect(seqs).toEqual([2, 3]);
  });

  it('streams with no token when none is given (the same option as the REST client)', async () => {
    const headers = await new Promise<Headers>((resolve) => {
      const stream = streamOrder({
        baseUrl: 'http://x.test',
        orderId: 7,
        transport: 'sse',
        fetch: (_input, init) => {
          resolve(new Headers(init?.headers));
          stream.close();
          return Promise.resolve(sse(''));
        },
        onEvent: () => undefined,
      });
    });
    expect(headers.has('authorization')).toBe(false);
  });

  it('an AbortSignal closes the stream', async () => {
    const controller = new AbortController();
    const aborted = await new Promise<boolean>((resolve) => {
      streamOrder({
        baseUrl: 'http://x.test',
        token: 't',
        orderId: 7,
        transport: 'sse',
        signal: controller.signal,
        fetch: (_input, init) => {
          init?.signal?.addEventListener('abort', () => resolve(true));
          controller.abort();
          return new Promise<Response>(() => undefined);
        },
        onEvent: () => undefined,
      });
    });
    expect(aborted).toBe(true);
  });
});
