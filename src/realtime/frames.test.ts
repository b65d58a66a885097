import { connect, type Socket } from 'node:net';
import fc from 'fast-check';
import { WebSocketServer, type WebSocket } from 'ws';
import { parseSeq, SEQ_TEXT, wsFrame, wsTextFrame } from './frames';

/**
 * The pre-framed bytes must be exactly what `ws` itself sends for the same text (our own
 * framer, frames.ts `wsTextFrame`, written to the socket past ws). Read off a raw TCP
 * socket, so nothing parses them first.
 */
describe('wsFrame', () => {
  let wss: WebSocketServer;
  let server: WebSocket;
  let raw: Socket;
  let received = Buffer.alloc(0);

  beforeAll(async () => {
    wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
    await new Promise((r) => wss.once('listening', r));
    const port = (wss.address() as { port: number }).port;
    const connected = new Promise<WebSocket>((r) => wss.once('connection', r));
    raw = connect(port, '127.0.0.1');
    raw.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    let head = '';
    await new Promise<void>((resolve) => {
      const onData = (d: Buffer) => {
        head += d.toString('latin1');
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        raw.off('data', onData);
        received = Buffer.from(head.slice(end + 4), 'latin1');
        raw.on('data', (more: Buffer) => (received = Buffer.concat([received, more])));
        resolve();
      };
      raw.on('data', onData);
    });
    server = await connected;
  });
  afterAll(async () => {
    raw.destroy();
    await new Promise((r) => wss.close(r));
  });

  async function sentByWs(text: string): Promise<Buffer> {
    received = Buffer.alloc(0);
    server.send(text);
    const expected = wsFrame(text).length;
    while (received.length < expected) await new Promise((r) => setImmediate(r));
    return received;
  }

  it.each([0, 1, 125, 126, 127, 65535, 65536, 200_000])('a %i-byte text: the same bytes as ws.send (every length encoding)', async (n) => {
    const text = 'x'.repeat(n);
    expect((await sentByWs(text)).equals(wsFrame(text))).toBe(true);
  });

  it('any text, unicode included (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 300 }), async (text) => {
        expect((await sentByWs(text)).equals(wsFrame(text))).toBe(true);
      }),
      { numRuns: 50 },
    );
  });

  it.each([0, 1, 125, 126, 127, 65535, 65536, 200_000])('wsTextFrame of a %i-byte message split in two: the same bytes as ws.send', async (n) => {
    const text = 'y'.repeat(n);
    const cut = Math.floor(n / 3);
    expect((await sentByWs(text)).equals(wsTextFrame(Buffer.from(text.slice(0, cut)), Buffer.from(text.slice(cut))))).toBe(true);
  });

  it('wsTextFrame of any prefix and body, unicode included (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 300 }), async (prefix, body) => {
        expect((await sentByWs(prefix + body)).equals(wsTextFrame(Buffer.from(prefix), Buffer.from(body)))).toBe(true);
      }),
      { numRuns: 50 },
    );
  });
});

describe('parseSeq and SEQ_TEXT (Last-Event-ID, since)', () => {
  it('reads back 0 and every positive safe integer', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        expect(parseSeq(String(n))).toBe(n);
        expect(SEQ_TEXT.test(String(n))).toBe(true);
      }),
    );
  });

  it('accepts exactly the canonical text of 0 and of positive safe integers (generated)', () => {
    const canonical = (text: string) => /^\d+$/.test(text) && String(Number(text)) === text && Number(text) <= Number.MAX_SAFE_INTEGER;
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('0', '1', '9', '-', '+', ' ', '.', 'e', 'x'), maxLength: 18 }), (text) => {
        expect(SEQ_TEXT.test(text)).toBe(canonical(text));
        expect(parseSeq(text)).toBe(canonical(text) ? Number(text) : null);
      }),
    );
    for (const text of ['9007199254740992', '9999999999999999', '00', '-0']) expect(parseSeq(text)).toBeNull();
  });
});
