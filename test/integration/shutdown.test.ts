/**
 * Graceful shutdown resets no request (http/drain.ts, as main.ts wires it on SIGTERM):
 * a request in flight is answered (with `Connection: close`), a request sent on a
 * keep-alive connection after shutdown began is answered 503 problem+json with
 * Retry-After and `Connection: close` (never ECONNRESET), streams are closed (WebSocket
 * 1001, SSE `retry:` then end), and the drain finishes once every connection is closed.
 */
import { Agent, createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createApp, type App } from '../../src/app';
import { parseConfig } from '../../src/config';
import { Drain } from '../../src/http';
import { issueToken, SqliteStore } from '../../src/store';
import { createOrder, openSse, openWs, WsClient, type StreamTarget } from '../support/streams';

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
    drain = new Drain(app.listener);
    server = createServer(drain.listener);
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

  it('answers what is in flight, refuses what arrives with 503 + Connection: close, closes streams with 1001, then finishes', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const inHandler = new Promise<void>((r) => (started = r));
    // A slow route of the user's own (Koa): in flight while shutdown begins.
    app.app.use(async (ctx, next) => {
      if (ctx.path !== '/slow') return next();
      started();
      await gate;
      ctx.body = 'done';
    });
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
    const slow = get(target.url, slowAgent, '/slow');
    await inHandler;

    const drained = drain.drain(server, () => app.realtime.close(), 60_000);

    // Sent on the idle keep-alive connection after shutdown began: an answer, not a reset.
    const late = await get(target.url, keepAlive, `/orders/${id}`, auth);
    expect(late).toMatchObject({ status: 503, headers: { connection: 'close', 'retry-after': '1', 'content-type': 'application/problem+json' } });
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
});
