/**
 * A client process of bench/realtime.ts (forked with `-r tsx/cjs`, driven over IPC): holds
 * thousands of WebSocket or SSE connections, so the load side of a 10k-connection run is
 * spread over processes and never shares an event loop with the servers or the bench.
 *
 * Connections are held in named groups (one per server under test). For the group being
 * measured it counts event messages of the current run, times each from the send time in
 * its note (see realtime-hist.ts) into a histogram and, when tracking, reports `{type:'done',
 * t}` once every live connection of the group has received the event sent at t.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';
import { io, type Socket as SioSocket } from 'socket.io-client';
import { bucketOf, newHist, nowUs, readStamp, type Stamp } from './realtime-hist';
import { persistedOperations } from '../../generated/graphql/persisted';

export type ClientCommand =
  | { cmd: 'ws-open'; group: string; url: string; token: string; channels: string[]; concurrency: number; client: WsClient }
  | { cmd: 'sse-open'; group: string; host: string; port: number; token: string; paths: string[]; concurrency: number }
  | { cmd: 'run'; group: string; run: number; track: boolean }
  | { cmd: 'stats' }
  | { cmd: 'sample'; group: string }
  | { cmd: 'close'; group: string }
  | { cmd: 'pause'; group: string }
  | { cmd: 'exit' };

/**
 * The WebSocket clients: `ws` (the ws package), `lean` (raw socket, the service's protocol),
 * `sio` (socket.io-client), `sio-lean` (the lean reader speaking Socket.IO's packets),
 * `gql-lean` (the lean reader speaking graphql-transport-ws on /graphql: the contract's
 * OrderEvents subscription, for the service and for graphql-ws peers alike).
 */
export type WsClient = 'ws' | 'lean' | 'sio' | 'sio-lean' | 'gql-lean';

export interface OpenResult {
  opened: number;
  failed: number;
  firstError?: string;
  ms: number;
}

export interface ClientStats {
  received: number;
  hist: number[];
  /** nowUs() of the last counted message (0: none). */
  lastAt: number;
  /** This process's CPU time (user + system) since the run started, µs. */
  cpuUs: number;
  live: Record<string, number>;
  /** Connections of the measured group that closed since the run started. */
  closedInRun: number;
}

type Conn = WebSocket | Socket | SioSocket;

interface Group {
  conns: Set<Conn>;
  live: number;
  sample?: string;
}

const groups = new Map<string, Group>();
const groupOf = (name: string): Group => {
  let g = groups.get(name);
  if (!g) groups.set(name, (g = { conns: new Set(), live: 0 }));
  return g;
};

let current: { group: string; run: number; track: boolean } | undefined;
let received = 0;
let hist = newHist();
let lastAt = 0;
let closedInRun = 0;
let cpuAtRun = process.cpuUsage();
const pendingT = new Map<number, number>();
const stamp: Stamp = { run: 0, t: 0 };

function onEvent(name: string, g: Group, data: Buffer): void {
  if (!readStamp(data, stamp)) return;
  if (g.sample === undefined) g.sample = data.toString();
  if (current?.group !== name || stamp.run !== current.run) return;
  const now = nowUs();
  received++;
  hist[bucketOf(now - stamp.t)]++;
  lastAt = now;
  if (current.track) {
    const c = (pendingT.get(stamp.t) ?? 0) + 1;
    if (c >= g.live) {
      pendingT.delete(stamp.t);
      process.send!({ type: 'done', t: stamp.t });
    } else pendingT.set(stamp.t, c);
  }
}

function onClose(name: string, g: Group, c: Conn): void {
  if (!g.conns.delete(c)) return;
  g.live--;
  if (current?.group === name) closedInRun++;
}

function openWs(name: string, url: string, token: string, channel: string): Promise<void> {
  const g = groupOf(name);
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, headers: { authorization: `Bearer ${token}` } });
    const fail = (err: Error) => {
      clearTimeout(timer);
      ws.terminate();
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error('no subscribed ack within 30 s')), 30_000);
    ws.on('error', (err) => fail(err));
    ws.once('unexpected-response', (_req, res) => fail(new Error(`handshake answered ${res.statusCode}`)));
    ws.once('open', () => ws.send(JSON.stringify({ type: 'subscribe', channel })));
    ws.once('message', (data) => {
      const text = (data as Buffer).toString();
      if (!text.startsWith('{"type":"subscribed"')) return fail(new Error(`first message was ${text.slice(0, 120)}`));
      clearTimeout(timer);
      g.conns.add(ws);
      g.live++;
      ws.on('message', (d) => onEvent(name, g, d as Buffer));
      ws.once('close', () => onClose(name, g, ws));
      resolve();
    });
  });
}

/**
 * A Socket.IO client (the Socket.IO peer, bench/baseline/socketio.ts): websocket transport
 * only, one Manager per connection, no reconnection; `subscribe` acked by the server. The
 * peer emits the service's message as an object: its note is the stamp.
 */
function openSio(name: string, url: string, channel: string): Promise<void> {
  const g = groupOf(name);
  return new Promise((resolve, reject) => {
    const s = io(url, { transports: ['websocket'], forceNew: true, reconnection: false, timeout: 30_000 });
    const timer = setTimeout(() => fail(new Error('no subscribe ack within 30 s')), 30_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      s.disconnect();
      reject(err);
    };
    s.once('connect_error', (err) => fail(err));
    s.once('connect', () =>
      s.emit('subscribe', channel, () => {
        clearTimeout(timer);
        g.conns.add(s);
        g.live++;
        s.on('message', (m: { order?: { note?: string } }) => {
          const note = m?.order?.note;
          if (typeof note === 'string') onEvent(name, g, Buffer.from(`"note":"${note}"`));
        });
        s.once('disconnect', () => onClose(name, g, s));
        resolve();
      }),
    );
  });
}

/** A client-side (masked) frame. */
function maskedFrame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const head = len < 126 ? 2 : 4;
  const out = Buffer.alloc(head + 4 + len);
  out[0] = 0x80 | opcode;
  if (len < 126) out[1] = 0x80 | len;
  else {
    out[1] = 0x80 | 126;
    out.writeUInt16BE(len, 2);
  }
  const mask = randomBytes(4);
  mask.copy(out, head);
  for (let i = 0; i < len; i++) out[head + 4 + i] = payload[i] ^ mask[i & 3];
  return out;
}

/**
 * What a lean client speaks over its WebSocket: the request target and headers of the
 * handshake, its first messages, and which text frames make the subscription live.
 */
interface LeanProtocol {
  /** Request target of the upgrade (path and query). */
  target: string;
  /** Extra request header lines, each ending in CRLF. */
  headers: string;
  /** After the 101: what the client sends first (nothing: it waits for the server). */
  opened(send: (text: string) => void): void;
  /** A text frame before the subscription is live: 'live', an error text, or undefined to go on waiting. */
  setup(text: string, send: (text: string) => void): 'live' | { error: string } | undefined;
  /** A data frame once live: true when it was protocol (answered here), not an event. */
  control?(payload: Buffer, send: (text: string) => void): boolean;
}

/** The service's protocol (asyncapi.yaml): `subscribe`, answered `subscribed`. */
const serviceProtocol = (u: URL, token: string, channel: string): LeanProtocol => ({
  target: `${u.pathname}${u.search}`,
  headers: `Authorization: Bearer ${token}\r\n`,
  opened: (send) => send(JSON.stringify({ type: 'subscribe', channel })),
  setup: (text) => (text.startsWith('{"type":"subscribed"') ? 'live' : { error: `first message was ${text.slice(0, 120)}` }),
});

/** The contract's OrderEvents subscription (contracts/operations/OrderEvents.graphql): its selection carries the order's note, the stamp. */
const ORDER_EVENTS = persistedOperations.OrderEvents.text;

/**
 * graphql-transport-ws (graphql-ws's protocol) on /graphql: `connection_init` with the
 * token, then `subscribe` of OrderEvents for the channel's order once acknowledged, and
 * live from there (a graphql-ws peer acknowledges no subscription; the service's first
 * `next`, its `subscribed` event, carries no stamp and is not counted; the warm-up run
 * comes before any measured one). The server's `ping` is answered `pong`.
 */
const graphqlWsProtocol = (token: string, channel: string): LeanProtocol => ({
  target: '/graphql',
  headers: `Authorization: Bearer ${token}\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n`,
  opened: (send) => send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })),
  setup(text, send) {
    if (text.startsWith('{"type":"connection_ack"')) {
      const id = channel.slice('order:'.length);
      send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: ORDER_EVENTS, operationName: 'OrderEvents', variables: { id } } }));
      return 'live';
    }
    if (text.startsWith('{"type":"ping"')) return void send('{"type":"pong"}');
    return { error: `unexpected message ${text.slice(0, 120)}` };
  },
  control(payload, send) {
    if (payload.length > 32 || !payload.toString().startsWith('{"type":"ping"')) return false;
    send('{"type":"pong"}');
    return true;
  },
});

const PING = 0x32; // '2'

/**
 * Socket.IO 4 as socket.io-client speaks it on the websocket transport (Engine.IO 4 packets
 * in text frames): the server's open packet `0{...}` is answered `40` (connect to the main
 * namespace), its `40{...}` with `420["subscribe",channel]` (an event with ack id 0), and
 * the ack `430[...]` makes it live. The server's pings (`2`) are answered `3`. Broadcasts
 * arrive as `42["message",{...}]`; their note is the stamp.
 */
const socketIoProtocol = (channel: string): LeanProtocol => ({
  target: '/socket.io/?EIO=4&transport=websocket',
  headers: '',
  opened: () => undefined,
  setup(text, send) {
    if (text === '2') return void send('3');
    if (text.startsWith('0{')) return void send('40');
    if (text.startsWith('40')) return void send(`420${JSON.stringify(['subscribe', channel])}`);
    if (text.startsWith('430')) return 'live';
    return { error: `unexpected packet ${text.slice(0, 120)}` };
  },
  control(payload, send) {
    if (payload.length !== 1 || payload[0] !== PING) return false;
    send('3');
    return true;
  },
});

/**
 * A lean WebSocket client on a raw socket: the RFC 6455 handshake and a minimal frame reader
 * (server frames are unmasked; no extensions are offered, so none are used). It costs the
 * client process a fraction of what the `ws` client's stream-based receiver costs per
 * message, which matters when two client processes receive what 10k sockets are sent.
 * It speaks the service's protocol or Socket.IO's (`sio-lean`), so both sides of a
 * comparison are read by the same code at the same cost per message (on loopback a
 * server's write also runs its reader's TCP receive, so the reader is part of the setup).
 */
function openLeanWs(name: string, url: string, protocolOf: (u: URL) => LeanProtocol): Promise<void> {
  const g = groupOf(name);
  const u = new URL(url);
  const p = protocolOf(u);
  return new Promise((resolve, reject) => {
    const s = connect({ host: u.hostname, port: Number(u.port) });
    let state: 'head' | 'setup' | 'live' = 'head';
    let pending: Buffer | undefined;
    const send = (text: string) => void s.write(maskedFrame(0x1, Buffer.from(text)));
    const fail = (err: Error) => {
      if (state === 'live') return;
      state = 'live'; // settled
      clearTimeout(timer);
      s.destroy();
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error('no subscribed ack within 30 s')), 30_000);
    s.on('error', (err) => fail(err));
    s.once('connect', () => {
      s.setNoDelay(true);
      s.write(`GET ${p.target} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` + `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n${p.headers}\r\n`);
    });
    const onFrame = (opcode: number, payload: Buffer) => {
      if (opcode === 0x8) return s.end();
      if (opcode === 0x9) return void s.write(maskedFrame(0xa, payload));
      if (state === 'live') {
        if (p.control?.(payload, send)) return;
        return onEvent(name, g, payload);
      }
      const step = p.setup(payload.toString(), send);
      if (step === undefined) return;
      if (step !== 'live') return fail(new Error(step.error));
      state = 'live';
      clearTimeout(timer);
      g.conns.add(s);
      g.live++;
      s.once('close', () => onClose(name, g, s));
      resolve();
    };
    s.on('data', (d: Buffer) => {
      let b = pending ? Buffer.concat([pending, d]) : d;
      pending = undefined;
      if (state === 'head') {
        const end = b.indexOf('\r\n\r\n');
        if (end < 0) return void (pending = b);
        const head = b.subarray(0, end).toString('latin1');
        if (!head.startsWith('HTTP/1.1 101')) return fail(new Error(`handshake answered ${head.split('\r\n')[0]}`));
        state = 'setup';
        p.opened(send);
        b = b.subarray(end + 4);
      }
      let i = 0;
      while (b.length - i >= 2) {
        let len = b[i + 1] & 0x7f;
        let at = i + 2;
        if (len === 126) {
          if (b.length - i < 4) break;
          len = b.readUInt16BE(i + 2);
          at = i + 4;
        } else if (len === 127) {
          if (b.length - i < 10) break;
          len = Number(b.readBigUInt64BE(i + 2));
          at = i + 10;
        }
        if (b.length < at + len) break;
        onFrame(b[i] & 0x0f, b.subarray(at, at + len));
        i = at + len;
      }
      if (i < b.length) pending = Buffer.from(b.subarray(i));
    });
  });
}

const BLANK = Buffer.from('\n\n');

function openSse(name: string, host: string, port: number, token: string, path: string): Promise<void> {
  const g = groupOf(name);
  return new Promise((resolve, reject) => {
    const s = connect({ host, port });
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.destroy();
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error('no 200 within 30 s')), 30_000);
    s.on('error', (err) => fail(err));
    s.once('connect', () => s.write(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`));
    let head = '';
    const onHead = (d: Buffer) => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      s.off('data', onHead);
      if (!head.startsWith('HTTP/1.1 200')) return fail(new Error(head.split('\r\n')[0]));
      settled = true;
      clearTimeout(timer);
      g.conns.add(s);
      g.live++;
      // Keep reading: heartbeats and events; each complete event (up to its blank line) is counted.
      let pending: Buffer | undefined;
      const onData = (d: Buffer) => {
        const b = pending ? Buffer.concat([pending, d]) : d;
        pending = undefined;
        let i = 0;
        for (let end = b.indexOf(BLANK, i); end >= 0; end = b.indexOf(BLANK, i)) {
          onEvent(name, g, b.subarray(i, end));
          i = end + 2;
        }
        if (i < b.length) pending = Buffer.from(b.subarray(i));
      };
      const rest = Buffer.from(head.slice(head.indexOf('\r\n\r\n') + 4), 'latin1');
      if (rest.length) onData(rest);
      s.on('data', onData);
      s.once('close', () => onClose(name, g, s));
      resolve();
    };
    s.on('data', onHead);
  });
}

async function pool(n: number, concurrency: number, open: (i: number) => Promise<void>): Promise<OpenResult> {
  const started = Date.now();
  let next = 0;
  let opened = 0;
  let failed = 0;
  let firstError: string | undefined;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(concurrency, n)) }, async () => {
      while (next < n) {
        const i = next++;
        try {
          await open(i);
          opened++;
        } catch (err) {
          failed++;
          firstError ??= err instanceof Error ? err.message : String(err);
        }
      }
    }),
  );
  return { opened, failed, firstError, ms: Date.now() - started };
}

async function closeGroup(name: string): Promise<void> {
  const g = groups.get(name);
  if (!g) return;
  for (const c of g.conns) {
    if (c instanceof WebSocket) c.terminate();
    else if ('io' in c) c.disconnect();
    else c.destroy();
  }
  const deadline = Date.now() + 5000;
  while (g.conns.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  groups.delete(name);
}

async function handle(m: ClientCommand): Promise<unknown> {
  switch (m.cmd) {
    case 'ws-open':
      return pool(m.channels.length, m.concurrency, (i) => {
        const channel = m.channels[i];
        switch (m.client) {
          case 'sio':
            return openSio(m.group, m.url.replace(/^ws/, 'http').replace(/\/orders$/, ''), channel);
          case 'sio-lean':
            return openLeanWs(m.group, m.url, () => socketIoProtocol(channel));
          case 'ws':
            return openWs(m.group, m.url, m.token, channel);
          case 'lean':
            return openLeanWs(m.group, m.url, (u) => serviceProtocol(u, m.token, channel));
          case 'gql-lean':
            return openLeanWs(m.group, m.url, () => graphqlWsProtocol(m.token, channel));
        }
      });
    case 'sse-open':
      return pool(m.paths.length, m.concurrency, (i) => openSse(m.group, m.host, m.port, m.token, m.paths[i]));
    case 'run':
      current = { group: m.group, run: m.run, track: m.track };
      received = 0;
      hist = newHist();
      lastAt = 0;
      closedInRun = 0;
      pendingT.clear();
      cpuAtRun = process.cpuUsage();
      return {};
    case 'stats': {
      const cpu = process.cpuUsage(cpuAtRun);
      const live: Record<string, number> = {};
      for (const [k, g] of groups) live[k] = g.live;
      return { received, hist, lastAt, cpuUs: cpu.user + cpu.system, live, closedInRun } satisfies ClientStats;
    }
    case 'sample':
      return groups.get(m.group)?.sample ?? null;
    case 'close':
      return closeGroup(m.group);
    case 'pause': {
      // Stalled clients: raw sockets (lean WebSocket, SSE) stop reading; the kernel's buffers fill.
      let paused = 0;
      for (const c of groups.get(m.group)?.conns ?? [])
        if (!(c instanceof WebSocket) && !('io' in c)) {
          c.pause();
          paused++;
        }
      return paused;
    }
    case 'exit':
      setImmediate(() => process.exit(0));
      return {};
  }
}

process.on('message', (msg: ClientCommand & { id: number }) => {
  handle(msg).then(
    (result) => process.send!({ id: msg.id, ok: true, result }),
    (err: unknown) => process.send!({ id: msg.id, ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
