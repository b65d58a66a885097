/**
 * The one body reader over real sockets, both ways a body reaches it: already whole in the
 * stream's buffer when reading starts, or still arriving after it. Same bytes, same limit,
 * same answer, whichever way the body was framed (Content-Length, chunks of any sizes).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import fc from 'fast-check';
import { readRequestText } from './body';

type Mode = 'whole' | 'arriving' | 'gone';
interface Outcome {
  status: number;
  text?: string;
}

let server: Server;
/** Per request (by its X-Case header): how to read it, and where its outcome goes. */
const cases = new Map<string, { mode: Mode; limit: number; headRead: () => void; done: (o: Outcome) => void }>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const c = cases.get(String(req.headers['x-case']));
    if (!c) return res.writeHead(500).end();
    const read = async () => {
      if (c.mode === 'gone') await new Promise((r) => (req.destroyed ? r(undefined) : req.once('close', r)));
      if (c.mode === 'whole') {
        // Every byte was written with the head; wait (turn by turn, no clock) until node's parser has the whole message.
        while (!req.complete) await new Promise((r) => setImmediate(r));
      }
      const started = readBody(req, c.limit);
      // 'arriving': the body is sent only now, after the reader started, so it reads a stream still open.
      c.headRead();
      const got = await started;
      c.done(got);
      if (!res.destroyed) res.writeHead(got.status).end();
    };
    read().catch((err: unknown) => c.done({ status: 500, text: String(err) })); // fails the property at once
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function readBody(req: IncomingMessage, limit: number): Promise<Outcome> {
  const got = await readRequestText(req, limit);
  return typeof got === 'string' ? { status: 200, text: got } : { status: got.problem.status };
}

let next = 0;
/** Sends `body` framed as asked and resolves to what the reader made of it. */
function send(mode: Mode, limit: number, body: Buffer, chunked: false | number[]): Promise<Outcome> {
  const id = String(next++);
  const { port } = server.address() as AddressInfo;
  let frame: Buffer;
  if (chunked === false) frame = body;
  else {
    const parts: Buffer[] = [];
    let at = 0;
    for (const size of [...chunked, body.length]) {
      const piece = body.subarray(at, Math.min(body.length, at + size));
      at += piece.length;
      if (piece.length > 0) parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
    }
    parts.push(Buffer.from('0\r\n\r\n'));
    frame = Buffer.concat(parts);
  }
  const head = `POST / HTTP/1.1\r\nHost: x\r\nX-Case: ${id}\r\nConnection: close\r\n${chunked === false ? `Content-Length: ${body.length}` : 'Transfer-Encoding: chunked'}\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined); // the server may answer 413 and close before the body is written
    socket.on('data', () => undefined);
    cases.set(id, {
      mode,
      limit,
      headRead: () => {
        if (mode === 'arriving') socket.end(frame);
      },
      done: (o) => {
        cases.delete(id);
        socket.destroy();
        resolve(o);
      },
    });
    socket.write(mode === 'whole' ? Buffer.concat([Buffer.from(head), frame]) : head, (err) => err && reject(err));
  });
}

const expected = (body: Buffer, limit: number): Outcome => {
  if (body.length > limit) return { status: 413 };
  try {
    return { status: 200, text: new TextDecoder('utf-8', { fatal: true }).decode(body) };
  } catch {
    return { status: 400 };
  }
};

describe('readRequestText', () => {
  it('answers 400, not never, when the client left before the body is read', async () => {
    const { port } = server.address() as AddressInfo;
    const id = String(next++);
    const outcome = new Promise<Outcome>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      cases.set(id, { mode: 'gone', limit: 1024, headRead: () => undefined, done: resolve });
      // Half a body, then the client goes; the server reads only once the request is destroyed.
      socket.write(`POST / HTTP/1.1\r\nHost: x\r\nX-Case: ${id}\r\nContent-Length: 10\r\n\r\n{"a"`, () => socket.destroy());
    });
    expect(await outcome).toEqual({ status: 400 });
  });

  it('gives the same text or refusal for a whole message and a body still arriving, any framing (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 300 }).map((t) => Buffer.from(t, 'utf8')),
          fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)), // any bytes: invalid UTF-8 too
        ),
        fc.integer({ min: 0, max: 400 }),
        fc.oneof(fc.constant<false>(false), fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 8 })),
        fc.constantFrom<Mode>('whole', 'arriving'),
        async (body, limit, chunked, mode) => {
          expect(await send(mode, limit, body, chunked)).toEqual(expected(body, limit));
        },
      ),
      { numRuns: 150 },
    );
  });
});
