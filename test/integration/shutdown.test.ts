/**
 * Graceful shutdown resets no request (http/drain.ts, as main.ts wires it on SIGTERM):
 * a request in flight is answered (with `Connection: close`), a request sent on a
 * keep-alive connection after shutdown began is answered 503 problem+json with
 * Retry-After and `Connection: close` (never ECONNRESET), streams are closed (WebSocket
 * 1001, SSE `retry:` then end), and the drain finishes once every connection is closed.
 */
import { Agent, createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createApp, type App } from '../../src/app';
import { parseConfig } from '../../src/config';
import { Drain } from '../../src/http';
import { inTurn } from '../../src/http/server';
import { ADMISSIONS_PER_TURN } from '../../src/realtime';
import { issueToken, SqliteStore } from '../../src/store';
import { createOrder, holdTokenReads, openSse, openWs, WsClient, type StreamTarget } from '../support/streams';
import { responses } from '../support/rawHttp';

/** One request over `agent`: status, headers and body, or the socket error it met. */
function get(url: string, agent: Agent, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request(url + path, { agent, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end();
  });
}

/** Writes `text` on a new connection; resolves to the answer's head (or what came before the close). */
function rawHead(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    s.setEncoding('utf8');
    s.on('data', (c: string) => {
      got += c;
      if (got.includes('\r\n\r\n')) s.destroy();
    });
    s.on('error', (err: NodeJS.ErrnoException) => (got ||= `error ${err.code ?? err.message}`));
    s.on('close', () => resolve(got.split('\r\n\r\n')[0]));
    s.write(text);
  });
}

/** A raw connection to `url`'s server: what it has received so far (latin1), and its close. */
function rawConnection(url: string): { socket: Socket; got: () => string; closed: Promise<void> } {
  const { hostname, port } = new URL(url);
  const socket = connect({ port: Number(port), host: hostname });
  socket.on('error', () => undefined);
  let got = '';
  socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
  const closed = new Promise<void>((r) => socket.on('close', () => r()));
  return { socket, got: () => got, closed };
}

/** The service's shutdown refusal (http/drain.ts shuttingDown), as a head: 503, problem+json, Retry-After 1. */
function expectShutdownRefusal(head: string): void {
  expect(head).toMatch(/^HTTP\/1\.1 503 /);
  expect(head).toMatch(/\r\nContent-Type: application\/problem\+json(;|\r\n|$)/);
  expect(head).toMatch(/\r\nRetry-After: 1(\r\n|$)/);
}

/** A route of the user's own at /slow (Koa): `inHandler` once a request is in it, which then waits for `release`. */
function slowRoute(app: App): { inHandler: Promise<void>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started!: () => void;
  const inHandler = new Promise<void>((r) => (started = r));
  app.app.use(async (ctx, next) => {
    if (ctx.path !== '/slow') return next();
    started();
    await gate;
    ctx.body = 'done';
  });
  return { inHandler, release };
}

describe('graceful shutdown', () => {
  let dir: string;
  let store: SqliteStore;
  let app: App;
  let server: Server;
  let drain: Drain;
  let target: StreamTarget;
  let token: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orderline-shutdown-'));
    const parsed = parseConfig({ DATA_DIR: dir });
    if (!parsed.ok) throw new Error(parsed.error);
    store = new SqliteStore(join(dir, 'orderline.sqlite'));
    await store.migrate();
    const account = await store.ensureAccount('alice');
    const issued = issueToken();
    await store.addToken(account.id, issued.selector, issued.verifierHash);
    token = issued.token;
    app = createApp({ config: parsed.config, store, logger: pino({ level: 'silent' }) });
    drain = new Drain(app.listener, app.finalizer);
    // As main.ts serves it: the drain judges each pipelined request in its turn (http/server.ts inTurn).
    server = drain.track(createServer(inTurn(drain.listener)));
    app.realtime.attach(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    target = { url, alice: { token }, fetch: (path, init = {}) => fetch(url + path, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) } }) };
  });

  afterEach(async () => {
    server.closeAllConnections();
    if (server.listening) await new Promise<void>((r) => server.close(() => r()));
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the listener gauges count open connections and the requests being answered (an event stream among them), at scrape time', async () => {
    app.metrics.watch(drain.gauges()); // as main.ts wires them
    const gauge = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await app.metrics.registry.metrics())?.[1]);
    const { inHandler, release } = slowRoute(app);
    const { id } = await createOrder(target);
    const idle = new Agent({ keepAlive: true, maxSockets: 1 });
    expect(await get(target.url, idle, `/orders/${id}`, { authorization: `Bearer ${token}` })).toMatchObject({ status: 200 });
    const sse = await openSse(target, id);
    const slowAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    const slow = get(target.url, slowAgent, '/slow', {});
    await inHandler;
    // Three connections: the idle keep-alive one, the stream's, the slow request's; two of them answering.
    expect(await gauge('orderline_open_connections')).toBeGreaterThanOrEqual(3); // fetch's pool may keep one more
    expect(await gauge('orderline_http_requests_in_flight')).toBe(2);
    release();
    await slow;
    sse.close();
    for (let i = 0; i < 200 && (await gauge('orderline_http_requests_in_flight')) !== 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await gauge('orderline_http_requests_in_flight')).toBe(0);
    idle.destroy();
    slowAgent.destroy();
  });

  it("ends an event stream's connection behind the stream at shutdown: a reconnect (EventSource's, after `retry:`) never meets this instance's 503 on it", async () => {
    const { id } = await createOrder(target);
    const { socket, got, closed } = rawConnection(target.url);
    socket.write(`GET /api/orders/${id}/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`);
    while (!got().includes('event: subscribed')) await new Promise((r) => setTimeout(r, 5));
    const drained = drain.drain(server, () => app.realtime.close(), 60_000);
    while (!got().endsWith('\r\n0\r\n\r\n')) await new Promise((r) => setTimeout(r, 1));
    // The next request on that connection, as a client whose pool kept it would send it: it must
    // find the connection closed (and open a new one, to an instance that serves), not get a 503
    // that EventSource would take as final.
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await closed;
    await drained;
    expect(got()).toMatch(/\r\nConnection: keep-alive\r\n/i);
    expect(got()).toMatch(/retry: \d+\n\n\r\n0\r\n\r\n$/);
    expect(got()).not.toMatch(/HTTP\/1\.1 503/);
  });

  it('a write pipelined behind an event stream, whose turn comes when the shutdown ends the stream, is refused 503 and stores nothing', async () => {
    const { id } = await createOrder(target);
    const { socket, got, closed } = rawConnection(target.url);
    const body = '{"note":"queued behind the stream"}';
    socket.write(
      `GET /api/orders/${id}/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n` +
        `POST /orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    while (!got().includes('event: subscribed')) await new Promise((r) => setTimeout(r, 5));
    const before = (await store.listOrders((await store.ensureAccount('alice')).id, 0, 100)).orders.length;
    const drained = drain.drain(server, () => app.realtime.close(), 60_000);
    await closed;
    await drained;
    // The stream's end, then the write's turn: the shutdown's 503, not a 201.
    expect(got()).toMatch(/\r\n\r\nHTTP\/1\.1 503 /);
    expect(got()).not.toMatch(/HTTP\/1\.1 201 /);
    expect((await store.listOrders((await store.ensureAccount('alice')).id, 0, 100)).orders.length).toBe(before);
  });

  it('a WebSocket handshake sent after the shutdown began, behind a request still being answered, waits for that answer, which ends the connection', async () => {
    const { inHandler, release } = slowRoute(app);
    const { socket, got, closed } = rawConnection(target.url);
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await inHandler;
    const drained = drain.drain(server, () => app.realtime.close(), 60_000);
    const upgraded = new Promise<void>((r) => server.once('upgrade', () => r()));
    socket.write(`GET /orders HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    await upgraded;
    await new Promise((r) => setImmediate(r));
    release();
    await closed;
    await drained;
    // Answers in the order asked (RFC 9112 9.3.2): the slow request's 200 whole, not cut off by
    // a refusal written ahead of it. It closes the connection (Connection: close), so the handshake
    // behind it is not processed (RFC 9112 9.6): the client sends it again on a new connection.
    const answers = responses(got());
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ status: 200, body: 'done' });
    expect(answers[0].head).toMatch(/\r\nConnection: close(\r\n|$)/i);
  });

  it('sends the events a WRITE_DELAY_MS batch still holds before the goodbye, on WebSocket as on SSE', async () => {
    const parsed = parseConfig({ DATA_DIR: dir, WRITE_DELAY_MS: '1000' });
    if (!parsed.ok) throw new Error(parsed.error);
    const delayed = createApp({ config: parsed.config, store, logger: pino({ level: 'silent' }) });
    const delayedDrain = new Drain(delayed.listener, delayed.finalizer);
    const srv = delayedDrain.track(createServer(inTurn(delayedDrain.listener)));
    delayed.realtime.attach(srv);
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
    const at: StreamTarget = { url, alice: { token }, fetch: (path, init = {}) => fetch(url + path, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) } }) };
    try {
      const { id } = await createOrder(at);
      const ws = await openWs(at);
      if (!(ws instanceof WsClient)) throw new Error(`upgrade refused: ${ws.status}`);
      ws.send({ type: 'subscribe', channel: `order:${id}` });
      await ws.until((m) => m.some((x) => x.type === 'subscribed'));
      const sse = await openSse(at, id);
      const write = await at.fetch(`/orders/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json', 'if-match': '*' }, body: JSON.stringify({ note: 'last' }) });
      expect(write.status).toBe(200);
      // The write's event is published before its answer is sent; it now waits up to 1 s in each stream's batch.
      const drained = delayedDrain.drain(srv, () => delayed.realtime.close(), 60_000);
      expect(await ws.closed()).toBe(1001);
      expect(ws.messages.filter((m) => m.type === 'order.updated').map((m) => m.seq)).toEqual([2]);
      await sse.reader!.done;
      expect(
        sse
          .reader!.all()
          .filter((e) => e.event === 'order.updated')
          .map((e) => e.id),
      ).toEqual(['2']);
      await drained;
    } finally {
      srv.closeAllConnections();
      if (srv.listening) await new Promise<void>((r) => srv.close(() => r()));
    }
  });

  it('answers what is in flight, refuses what arrives with 503 + Connection: close, closes streams with 1001, then finishes', async () => {
    // A slow route of the user's own (Koa): in flight while shutdown begins.
    const { inHandler, release } = slowRoute(app);
    const auth = { authorization: `Bearer ${token}` };
    const { id } = await createOrder(target);
    const ws = await openWs(target);
    if (!(ws instanceof WsClient)) throw new Error(`upgrade refused: ${ws.status}`);
    const sse = await openSse(target, id);
    // A keep-alive connection left idle, as a client pool holds them.
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
    const warm = await get(target.url, keepAlive, `/orders/${id}`, auth);
    expect(warm).toMatchObject({ status: 200 });
    const slowAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    const slow = get(target.url, slowAgent, '/slow', { 'x-request-id': 'slow-1' });
    await inHandler;

    const drained = drain.drain(server, () => app.realtime.close(), 60_000);
    // What a forced exit would cut is known by request id (main.ts logs it).
    expect(drain.inFlight().requests).toContain('slow-1');

    // Sent on the idle keep-alive connection after shutdown began: an answer, not a reset.
    // It goes through the finalizer every answer does: the client's request id echoed, the metric counted.
    const late = await get(target.url, keepAlive, `/orders/${id}`, { ...auth, 'x-request-id': 'late-1' });
    expect(late).toMatchObject({ status: 503, headers: { connection: 'close', 'retry-after': '1', 'content-type': 'application/problem+json', 'x-request-id': 'late-1' } });
    expect(await app.metrics.registry.metrics()).toMatch(/orderline_http_request_duration_seconds_count\{method="GET",route="unmatched",status="503"\} 1/);
    if ('body' in late) expect(JSON.parse(late.body)).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    // No new connection is accepted.
    expect(await get(target.url, new Agent(), '/healthz')).toEqual({ error: 'ECONNREFUSED' });
    // Streams were told to go elsewhere.
    expect(await ws.closed()).toBe(1001);
    await sse.reader!.done;
    expect(sse.reader!.all().filter((e) => e.retry !== undefined).length).toBe(2); // the first retry:, and the goodbye

    // The request in flight gets its answer, and its connection ends after it.
    release();
    expect(await slow).toMatchObject({ status: 200, body: 'done', headers: { connection: 'close' } });
    await drained; // every connection closed, long before the 60 s grace
    expect(server.listening).toBe(false);
    keepAlive.destroy();
    slowAgent.destroy();
  });

  it.each(['WebSocket upgrade', 'SSE request'] as const)('refuses 503 a %s whose check was still waiting on the store when the shutdown began', async (kind) => {
    const { id } = await createOrder(target);
    // A token not yet in the auth cache: its check reads the store, held here until the shutdown has begun.
    const issued = issueToken();
    await store.addToken((await store.ensureAccount('alice')).id, issued.selector, issued.verifierHash);
    const { entered: inStore, release } = holdTokenReads(store);
    const auth = `Authorization: Bearer ${issued.token}\r\n`;
    const text =
      kind === 'WebSocket upgrade'
        ? `GET /orders HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${auth}\r\n`
        : `GET /api/orders/${id}/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n${auth}\r\n`;
    const head = rawHead((server.address() as { port: number }).port, text);
    await inStore;
    const drained = drain.drain(server, () => app.realtime.close(), 60_000);
    release();
    // Not a stream opened after the others were told to go away: the service's shutdown refusal.
    expectShutdownRefusal(await head);
    await drained;
    expect(server.listening).toBe(false);
  });

  // Admitted: the upgrades let through before the shutdown began are switched at once (101);
  // the SSE requests let through still wait for their store read, which ends with the turn,
  // so the shutdown has begun when they are checked, and they are refused with the rest.
  // Store reads: only those let through read it (an SSE request its order; an upgrade
  // nothing, its token is in the auth cache), so the ones that waited were never checked.
  it.each([
    ['WebSocket upgrades', 'upgrade', '101 Switching Protocols', ADMISSIONS_PER_TURN, 0],
    ['SSE requests', 'request', '200 OK', 0, ADMISSIONS_PER_TURN],
  ] as const)('refuses 503 the %s still waiting for their turn when the shutdown begins, admitting none of them', async (_, event, admittedStatus, admittedCount, storeReads) => {
    // 80 stream requests read in one turn of the event loop: a child process holds 80
    // connections (all accepted first), then writes the 80 requests while this process is
    // kept busy, so the next poll reads them together. The first ADMISSIONS_PER_TURN go on to
    // be checked, the rest wait (realtime/admission.ts); the shutdown begins as the 80th is
    // read (an SSE request read after that the drain refuses; an upgrade, the closed queue).
    // Without the queue's close the waiting ones would be admitted in later turns.
    const n = 80;
    const { id } = await createOrder(target);
    let accepted = 0;
    let allAccepted!: () => void;
    const acceptedAll = new Promise<void>((r) => (allAccepted = r));
    server.on('connection', () => ++accepted === n && allAccepted());
    let read = 0;
    let drained: Promise<void> | undefined;
    server.prependListener(event, () => {
      if (++read === n) drained = drain.drain(server, () => app.realtime.close(), 60_000);
    });
    const { port } = server.address() as { port: number };
    const marker = join(dir, 'all-sent');
    const upgrade =
      event === 'upgrade'
        ? `GET /orders HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer ${token}\r\n\r\n`
        : `GET /api/orders/${id}/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    const script = `
      const net = require('node:net'), fs = require('node:fs');
      const [port, n, marker, upgrade] = [Number(process.argv[1]), Number(process.argv[2]), process.argv[3], process.argv[4]];
      const answers = [];
      const sockets = Array.from({ length: n }, () => {
        const s = net.connect(port, '127.0.0.1');
        let got = '';
        s.setEncoding('utf8');
        s.on('data', (c) => { got += c; if (got.startsWith(process.argv[5]) && got.includes('\\r\\n\\r\\n')) s.destroy(); });
        s.on('error', (e) => (got = 'error ' + e.code));
        s.on('close', () => { answers.push(got.split('\\r\\n\\r\\n')[0]); if (answers.length === n) console.log(JSON.stringify(answers)); });
        return s;
      });
      process.stdin.once('data', () => {
        process.stdin.pause();
        let sent = 0;
        for (const s of sockets) s.write(upgrade, () => { if (++sent === n) fs.writeFileSync(marker, ''); });
      });`;
    const child = spawn(process.execPath, ['-e', script, String(port), String(n), marker, upgrade, `HTTP/1.1 ${admittedStatus}`], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    await acceptedAll;
    const readsBefore = store.queryCount;
    child.stdin.end('go\n');
    // Busy until the child has written all 80, so that one poll reads them all.
    const deadline = Date.now() + 20_000;
    while (!existsSync(marker) && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    expect(existsSync(marker)).toBe(true);
    await exited;
    const answers = JSON.parse(out) as string[];
    const admitted = answers.filter((a) => a.startsWith(`HTTP/1.1 ${admittedStatus}`)).length;
    expect(admitted).toBe(admittedCount);
    // The rest: the service's shutdown refusal (problem+json, Retry-After), not a later check's answer.
    const refused = answers.filter((a) => a.startsWith('HTTP/1.1 503 '));
    expect(refused).toHaveLength(n - admitted);
    refused.forEach(expectShutdownRefusal);
    await drained;
    expect(server.listening).toBe(false);
    expect(store.queryCount - readsBefore).toBe(storeReads);
  });
});
