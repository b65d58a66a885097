import { streamOrder, type OrderEventMessage } from './realtime';

/** A text/event-stream body delivered in the given chunks. */
function sseResponse(chunks: string[]): Response {
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(enc.encode(chunk));
      c.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

const event = (seq: number) => JSON.stringify({ type: 'order.updated', channel: 'order:7', seq, status: 'paid', order: { id: 7 } });

describe('SSE parsing (eventsource-parser)', () => {
  it('reads CRLF line endings, comments, retry and chunks split anywhere, and resumes with Last-Event-ID', async () => {
    // CRLF framing as the event stream format allows; seq 3's JSON split over two data lines
    // between two members (the lines join with "\n", which JSON allows there).
    const CUT = event(3).indexOf('"channel"');
    const wire = `: hi\r\nretry: 10\r\n\r\nid: 2\r\nevent: order.updated\r\ndata: ${event(2)}\r\n\r\nid: 3\r\nevent: order.updated\r\ndata: ${event(3).slice(0, CUT)}\r\ndata: ${event(3).slice(CUT)}\r\n\r\n`;
    const chunks = [wire.slice(0, 7), wire.slice(7, 40), wire.slice(40, 41), wire.slice(41, 150), wire.slice(150)];
    const requests: (string | null)[] = [];
    const got: number[] = [];
    let resolveDone: () => void = () => undefined;
    const done = new Promise<void>((r) => (resolveDone = r));
    const stream = streamOrder({
      baseUrl: 'http://x.test',
      token: 't',
      orderId: 7,
      transport: 'sse',
      since: 1,
      backoff: { baseMs: 1, capMs: 5 },
      fetch: async (_input, init) => {
        requests.push(new Headers(init?.headers).get('last-event-id'));
        return requests.length === 1 ? sseResponse(chunks) : (resolveDone(), new Response(null, { status: 503 }));
      },
      onEvent: (m: OrderEventMessage) => got.push(m.seq),
    });
    await done;
    stream.close();
    expect(got).toEqual([2, 3]);
    expect(requests).toEqual(['1', '3']);
  });
});
