/**
 * Requests with an `Upgrade` header, on the wire: one that is not a WebSocket handshake
 * (`curl --http2` sends `Upgrade: h2c`) is served as plain HTTP (RFC 9110 7.8), body and
 * keep-alive included; a WebSocket handshake with bad fields is refused as problem+json.
 */
import { connect, type Socket } from 'node:net';
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../support/server';
import { holdTokenReads } from '../support/streams';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A raw connection: writes requests one at a time and reads each answer by its Content-Length. */
class Wire {
  private buffered = Buffer.alloc(0);
  private waiting?: () => void;
  private closed = false;
  private ended = false;
  private constructor(private readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, d]);
      this.waiting?.();
    });
    socket.on('end', () => {
      this.ended = true;
      this.waiting?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
  }

  static open(url: string): Promise<Wire> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      // allowHalfOpen: the client keeps its side open after the server's FIN, as a careless client would.
      const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true }, () => resolve(new Wire(socket)));
      socket.on('error', () => undefined); // a reset after the server closed is expected below
      socket.once('error', reject);
    });
  }

  async exchange(request: string): Promise<Answer> {
    this.socket.write(request);
    return this.next();
  }

  /** The next answer on the connection. */
  async next(): Promise<Answer> {
    for (;;) {
      const answer = this.take();
      if (answer) return answer;
      if (this.closed) throw new Error(`connection closed; read: ${this.buffered.toString('latin1')}`);
      await new Promise<void>((r) => (this.waiting = r));
    }
  }

  private take(): Answer | undefined {
    const end = this.buffered.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine, ...lines] = this.buffered.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
    const length = Number(headers['content-length'] ?? 0);
    if (this.buffered.length < end + 4 + length) return undefined;
    const body = this.buffered.subarray(end + 4, end + 4 + length).toString('utf8');
    this.buffered = this.buffered.subarray(end + 4 + length);
    return { status: Number(statusLine.split(' ')[1]), headers, body };
  }

  /** Bytes read and not taken as an answer. */
  rest(): string {
    return this.buffered.toString('latin1');
  }

  /** Resolves once the server has ended its side (its FIN came); the client keeps its own open. */
  async endedByServer(): Promise<void> {
    while (!this.ended && !this.closed) await new Promise<void>((r) => (this.waiting = r));
  }

  close(): void {
    this.socket.destroy();
  }
}

/**
 * Waits until the server holds no more connections than `before`, checking after each
 * turn of the event loop (a socket the server destroyed leaves its count in the next one):
 * a socket it only half closed would stay counted as long as the client keeps its side open.
 */
async function serverLetGo(before: number): Promise<void> {
  while ((await s.connections()) > before) await new Promise((r) => setImmediate(r));
}

/** Opens a raw connection, hands it to `use`, and closes it whatever happens. */
async function onWire(use: (wire: Wire) => Promise<void>): Promise<void> {
  const wire = await Wire.open(s.url);
  try {
    await use(wire);
  } finally {
    wire.close();
  }
}

const host = () => `Host: ${new URL(s.url).host}`;
const auth = () => `Authorization: Bearer ${s.alice.token}`;

/** Upgrade values that are not a WebSocket handshake, in any letter case. */
const notWebSocket = fc.tuple(fc.constantFrom('h2c', 'HTTP/2.0', 'TLS/1.2', 'IRC/6.9', 'h2c, TLS/1.3', 'websocket, h2c'), fc.boolean()).map(([token, upper]) => (upper ? token.toUpperCase() : token));

describe('a request whose Upgrade is not a WebSocket handshake', () => {
  it('is served as plain HTTP: a create with its body, then a read and a list on the same connection (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(notWebSocket, fc.constantFrom('Upgrade', 'Upgrade, HTTP2-Settings', 'keep-alive, Upgrade'), async (upgrade, connection) => {
        await onWire(async (wire) => {
          const body = JSON.stringify({ items: [{ sku: 'UP', quantity: 1, unit_price_cents: 100 }] });
          const upgradeFields = `Connection: ${connection}\r\nUpgrade: ${upgrade}\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n`;
          const created = await wire.exchange(`POST /orders HTTP/1.1\r\n${host()}\r\n${auth()}\r\n${upgradeFields}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
          expect(created.status).toBe(201);
          expect(created.headers['x-request-id']).toBeTruthy();
          const id = (JSON.parse(created.body) as { id: number }).id;
          const read = await wire.exchange(`GET /orders/${id} HTTP/1.1\r\n${host()}\r\n${auth()}\r\n${upgradeFields}\r\n`);
          expect(read.status).toBe(200);
          expect(read.headers.etag).toBe(created.headers.etag);
          expect(read.headers['x-request-id']).toBeTruthy();
          const list = await wire.exchange(`GET /orders?limit=1 HTTP/1.1\r\n${host()}\r\n${auth()}\r\n\r\n`);
          expect(list.status).toBe(200);
          expect(JSON.parse(list.body)).toHaveProperty('orders');
        });
      }),
      { numRuns: 20 },
    );
  });

  it('on a WebSocket path, a POST carrying Upgrade: websocket is served as the POST it is', async () => {
    await onWire(async (wire) => {
      const body = JSON.stringify({ query: '{ __typename }' });
      const answer = await wire.exchange(
        `POST /graphql HTTP/1.1\r\n${host()}\r\n${auth()}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toEqual({ data: { __typename: 'Query' } });
    });
  });
});

describe('a WebSocket handshake with bad fields', () => {
  const key = 'dGhlIHNhbXBsZSBub25jZQ==';
  const cases: [string, string, Record<string, string>?][] = [
    ['no key', 'Sec-WebSocket-Version: 13\r\n'],
    ['a short key', 'Sec-WebSocket-Key: abc==\r\nSec-WebSocket-Version: 13\r\n'],
    ['no version', `Sec-WebSocket-Key: ${key}\r\n`, { 'sec-websocket-version': '13, 8' }],
    ['an unknown version', `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 12\r\n`, { 'sec-websocket-version': '13, 8' }],
    ['a version with a leading zero', `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 013\r\n`, { 'sec-websocket-version': '13, 8' }],
    ['a version in another notation', `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 0xd\r\n`, { 'sec-websocket-version': '13, 8' }],
    ['a malformed subprotocol list', `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: a,,b\r\n`],
  ];
  it.each(cases)('%s: 400 problem+json with a request id, on /orders and /graphql', async (_what, fields, extra = {}) => {
    for (const path of ['/orders', '/graphql']) {
      await onWire(async (wire) => {
        const answer = await wire.exchange(`GET ${path} HTTP/1.1\r\n${host()}\r\n${auth()}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${fields}\r\n`);
        expect(answer.status).toBe(400);
        expect(answer.headers['content-type']).toBe('application/problem+json');
        expect(answer.headers['x-request-id']).toBeTruthy();
        expect(answer.headers).toMatchObject(extra);
        expect(JSON.parse(answer.body)).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
      });
    }
  });
});

describe('a WebSocket handshake path is matched as sent: // starts no authority, dot segments are not resolved', () => {
  it.each(['//orders', '//x/orders', '//x/graphql', '/x/../orders', '/x/%2e%2e/graphql'])('%s: 404 naming that path, not an endpoint at the path after the "authority"', async (target) => {
    await onWire(async (wire) => {
      const answer = await wire.exchange(
        `GET ${target} HTTP/1.1\r\n${host()}\r\n${auth()}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.body)).toMatchObject({ status: 404, detail: `No WebSocket endpoint at ${target}` });
    });
  });
});

describe('a WebSocket handshake whose target is no URL', () => {
  it.each(['http://x:99999/orders', 'http://[::1/orders', 'http://x:99999/graphql'])('%s: 400 problem+json, not a 503', async (target) => {
    await onWire(async (wire) => {
      const answer = await wire.exchange(
        `GET ${target} HTTP/1.1\r\n${host()}\r\n${auth()}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
      expect(answer.status).toBe(400);
      expect(answer.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(answer.body)).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    });
  });
});

describe('subprotocols on /orders', () => {
  it('it speaks none: an offered one is not echoed (RFC 6455 4.2.2)', async () => {
    await onWire(async (wire) => {
      const answer = await wire.exchange(
        `GET /orders HTTP/1.1\r\n${host()}\r\n${auth()}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: a, b, graphql-transport-ws\r\n\r\n`,
      );
      expect(answer.status).toBe(101);
      expect(answer.headers['sec-websocket-protocol']).toBeUndefined();
    });
  });
});

describe('a WebSocket handshake over HTTP/1.0', () => {
  it('is refused 400 problem+json (RFC 6455 4.1: the opening handshake is an HTTP/1.1 GET), on /orders and /graphql', async () => {
    for (const path of ['/orders', '/graphql']) {
      await onWire(async (wire) => {
        const answer = await wire.exchange(
          `GET ${path} HTTP/1.0\r\n${host()}\r\n${auth()}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n`,
        );
        expect(answer.status).toBe(400);
        expect(answer.headers['content-type']).toBe('application/problem+json');
        expect(JSON.parse(answer.body)).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
      });
    }
  });
});

describe('the re-fed head is the head the client sent', () => {
  it('a request with as many header fields as node:http may drop is refused 400 and its connection closed, never split in two (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 500, max: 2400 }), fc.constantFrom('/orders', '/healthz', '/smuggled'), async (fillers, smuggled) => {
        const before = await s.connections();
        await onWire(async (wire) => {
          const second = `GET ${smuggled} HTTP/1.1\r\n${host()}\r\n\r\n`;
          const filler = 'a: b\r\n'.repeat(fillers);
          const answer = await wire.exchange(`POST /orders HTTP/1.1\r\n${host()}\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n${filler}Content-Length: ${second.length}\r\n\r\n${second}`);
          // Ours: 400 problem+json. Node 22 refuses the longest lists itself (431, no body) before any code of ours runs.
          expect([400, 431]).toContain(answer.status);
          if (answer.status === 400) expect(answer.headers['content-type']).toBe('application/problem+json');
          await wire.endedByServer();
          expect(wire.rest()).toBe(''); // no second answer
          await serverLetGo(before);
        });
      }),
      { numRuns: 5 },
    );
  });

  it('a request pipelined behind one still being answered waits its turn, then is answered', async () => {
    await onWire(async (wire) => {
      const first = await wire.exchange(`GET /orders?limit=1 HTTP/1.1\r\n${host()}\r\n${auth()}\r\n\r\nGET /orders?limit=2 HTTP/1.1\r\n${host()}\r\n${auth()}\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n`);
      expect(first.status).toBe(200);
      const second = await wire.next();
      expect(second.status).toBe(200);
      expect(second.headers['x-request-id']).toBeTruthy();
    });
  });

  it('behind two requests still being answered (the second one slow: its token read waits), it waits for both, then is answered', async () => {
    const slowToken = await s.tokenFor('alice'); // not in the auth cache: its check reads the store, held below
    const { entered, release } = holdTokenReads(s.store);
    try {
      await onWire(async (wire) => {
        const first = wire.exchange(
          `GET /healthz HTTP/1.1\r\n${host()}\r\n\r\nGET /orders?limit=1 HTTP/1.1\r\n${host()}\r\nAuthorization: Bearer ${slowToken}\r\n\r\nGET /healthz HTTP/1.1\r\n${host()}\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n`,
        );
        expect((await first).status).toBe(200);
        await entered;
        release();
        expect((await wire.next()).status).toBe(200);
        expect((await wire.next()).status).toBe(200);
      });
    } finally {
      release();
      s.store.tokenBySelector = Object.getPrototypeOf(s.store).tokenBySelector.bind(s.store);
    }
  });

  it('a refused upgrade closes its connection even when the client keeps its side open', async () => {
    const before = await s.connections();
    await onWire(async (wire) => {
      const answer = await wire.exchange(`GET /orders HTTP/1.1\r\n${host()}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n`);
      expect(answer.status).toBe(400);
      await wire.endedByServer();
      // The client still holds its side open: the server has let the socket go all the same.
      await serverLetGo(before);
    });
  });
});
