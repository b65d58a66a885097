/**
 * A WebSocket client written on a bare TCP socket, for the fuzzer: it sends frames as
 * RFC 6455 section 5 lays them out, or broken on purpose (unmasked, reserved opcodes and
 * bits, oversized control frames, lengths that lie, text that is not UTF-8), and reads the
 * server's frames as they come. A library client (`ws`) refuses to send most of these.
 * Nothing here waits for time to pass: every wait is for a frame, an answer or the end of
 * the socket (jest's timeout bounds a wait that never ends).
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

export const OPCODE = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const;

export interface FrameOptions {
  fin?: boolean;
  /** RSV1-3 as bits 0b100, 0b010, 0b001. */
  rsv?: number;
  /** Client frames must be masked (RFC 6455 5.1); false sends one unmasked. */
  mask?: boolean;
  /** A payload length to claim in the header instead of the real one (the payload is still what is given). */
  claimedLength?: bigint;
}

/** One frame's bytes. */
export function frame(opcode: number, payload: Buffer, o: FrameOptions = {}): Buffer {
  const { fin = true, rsv = 0, mask = true } = o;
  const len = o.claimedLength ?? BigInt(payload.length);
  const head: number[] = [(fin ? 0x80 : 0) | ((rsv & 7) << 4) | (opcode & 0x0f)];
  const maskBit = mask ? 0x80 : 0;
  let ext = Buffer.alloc(0);
  if (len < 126n) head.push(maskBit | Number(len));
  else if (len < 65536n) {
    head.push(maskBit | 126);
    ext = Buffer.alloc(2);
    ext.writeUInt16BE(Number(len));
  } else {
    head.push(maskBit | 127);
    ext = Buffer.alloc(8);
    ext.writeBigUInt64BE(len);
  }
  if (!mask) return Buffer.concat([Buffer.from(head), ext, payload]);
  const key = randomBytes(4);
  const masked = Buffer.from(payload.map((b, i) => b ^ key[i % 4]));
  return Buffer.concat([Buffer.from(head), ext, key, masked]);
}

export interface ServerFrame {
  opcode: number;
  fin: boolean;
  payload: Buffer;
}

export type Upgrade = { ok: true; ws: RawWs } | { ok: false; status: number; headers: Record<string, string>; body: string };

export class RawWs {
  readonly frames: ServerFrame[] = [];
  ended = false;
  private buffer = Buffer.alloc(0);
  private waiters: (() => void)[] = [];

  private constructor(
    private readonly socket: Socket,
    rest: Buffer,
  ) {
    socket.on('data', (d: Buffer) => this.take(d));
    socket.on('close', () => this.finish());
    socket.on('error', () => this.finish());
    this.take(rest);
  }

  /** Opens `path` with an upgrade request (extra request headers as given); a refusal is returned as the HTTP answer. */
  static open(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<Upgrade> {
    const url = new URL(baseUrl);
    const socket = connect(Number(url.port), url.hostname);
    const lines = [
      `GET ${path} HTTP/1.1`,
      `Host: ${url.host}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
      'Sec-WebSocket-Version: 13',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    return new Promise((resolve, reject) => {
      let got = Buffer.alloc(0);
      let head: { status: number; headers: Record<string, string>; bodyStart: number } | undefined;
      const settleRefusal = () => {
        if (!head) return reject(new Error(`upgrade: the connection ended before an answer (${got.length} bytes)`));
        const body = got.subarray(head.bodyStart).toString('utf8');
        resolve({ ok: false, status: head.status, headers: head.headers, body });
      };
      const onData = (d: Buffer) => {
        got = Buffer.concat([got, d]);
        if (!head) {
          const end = got.indexOf('\r\n\r\n');
          if (end < 0) return;
          const [statusLine, ...fields] = got.subarray(0, end).toString('latin1').split('\r\n');
          const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0);
          const hs: Record<string, string> = {};
          for (const f of fields) {
            const i = f.indexOf(':');
            hs[f.slice(0, i).trim().toLowerCase()] = f.slice(i + 1).trim();
          }
          head = { status, headers: hs, bodyStart: end + 4 };
          if (status === 101) {
            socket.off('data', onData);
            socket.off('end', settleRefusal);
            socket.off('error', onError);
            resolve({ ok: true, ws: new RawWs(socket, got.subarray(end + 4)) });
            return;
          }
        }
        const length = Number(head.headers['content-length'] ?? NaN);
        if (Number.isFinite(length) && got.length - head.bodyStart >= length) {
          socket.destroy();
          settleRefusal();
        }
      };
      const onError = (err: Error) => (head ? settleRefusal() : reject(err));
      socket.on('data', onData);
      socket.once('end', settleRefusal);
      socket.once('error', onError);
    });
  }

  send(bytes: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  text(payload: string | Buffer, o: FrameOptions = {}): void {
    this.send(frame(OPCODE.text, typeof payload === 'string' ? Buffer.from(payload) : payload, o));
  }

  /** The JSON of every text message so far (a frame whose text is not JSON shows as `{ notJson: text }`). */
  messages(): Record<string, unknown>[] {
    return this.frames
      .filter((f) => f.opcode === OPCODE.text)
      .map((f) => {
        const t = f.payload.toString('utf8');
        try {
          return JSON.parse(t) as Record<string, unknown>;
        } catch {
          return { notJson: t };
        }
      });
  }

  /** The close frame's code (1005 when it carries none), once one came. */
  closeCode(): number | undefined {
    const c = this.frames.find((f) => f.opcode === OPCODE.close);
    if (!c) return undefined;
    return c.payload.length >= 2 ? c.payload.readUInt16BE(0) : 1005;
  }

  /** Resolves when `pred` holds, or when the socket ended (then `pred` is tried once more by the caller). */
  async until(pred: () => boolean): Promise<boolean> {
    while (!pred()) {
      if (this.ended) return pred();
      await new Promise<void>((r) => this.waiters.push(r));
    }
    return true;
  }

  /** Ends our side with a close frame and the socket. */
  close(): void {
    this.send(frame(OPCODE.close, Buffer.from([0x03, 0xe8])));
    this.socket.end();
    this.socket.destroy();
  }

  private take(d: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, d]);
    for (;;) {
      if (this.buffer.length < 2) break;
      const b0 = this.buffer[0];
      const b1 = this.buffer[1];
      let len = b1 & 0x7f;
      let at = 2;
      if (len === 126) {
        if (this.buffer.length < 4) break;
        len = this.buffer.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (this.buffer.length < 10) break;
        len = Number(this.buffer.readBigUInt64BE(2));
        at = 10;
      }
      if (b1 & 0x80) at += 4; // a server must not mask; read it anyway
      if (this.buffer.length < at + len) break;
      this.frames.push({ opcode: b0 & 0x0f, fin: (b0 & 0x80) !== 0, payload: this.buffer.subarray(at, at + len) });
      this.buffer = this.buffer.subarray(at + len);
    }
    this.wake();
  }

  private finish(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    w.forEach((f) => f());
  }
}
