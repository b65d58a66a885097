/** Starting and talking to the servers under test: tokens, scrapes, writes that publish. */
import { metric } from '../lib/prometheus';
import { type Running, startBaseline } from '../lib/server';
import { Agent, request } from 'node:http';
// ---- servers ----------------------------------------------------------------------------------

export async function tokenOf(srv: Running): Promise<string> {
  if (process.env.BENCH_TOKEN) return process.env.BENCH_TOKEN;
  const line = await srv.waitForOutput(/demo token/);
  return line.trim().split(' ').pop()!;
}

export const portOf = (srv: Running) => Number(new URL(srv.url).port);

export async function scrape(srv: Running): Promise<string> {
  const res = await fetch(`${srv.metricsUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
  return res.text();
}

/** The service's event-loop delay p99 in ms since the previous scrape (prom-client resets it on scrape). */
export async function loopP99(srv: Running): Promise<number | undefined> {
  const v = metric(await scrape(srv), 'nodejs_eventloop_lag_p99_seconds');
  return v === undefined || Number.isNaN(v) ? undefined : v * 1000;
}

export const agent = new Agent({ keepAlive: true, maxSockets: 16 });

/**
 * One HTTP request on the keep-alive agent. A reused socket the server closed while idle
 * (its keep-alive timeout) fails before the server read anything: retried once on a new one.
 */
export async function call(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  try {
    return await callOnce(url, method, headers, body);
  } catch (err) {
    if ((err as { reused?: boolean }).reused && (err as NodeJS.ErrnoException).code === 'ECONNRESET') return callOnce(url, method, headers, body);
    throw err;
  }
}

export function callOnce(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', (err) => reject(Object.assign(err, { reused: req.reusedSocket })));
    req.end(body);
  });
}

export type Publish = (note: string) => Promise<number>;

export const patchOrder1 =
  (svc: Running, token: string): Publish =>
  async (note) =>
    (await call(`${svc.url}/orders/1`, 'PATCH', { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json', 'if-match': '*' }, JSON.stringify({ note }))).status;

/** The bare server broadcasts `sample` (a real service message) with its note replaced. */
export const publishRaw =
  (base: Running, sample: string): Publish =>
  async (note) =>
    (await call(`${base.url}/publish?channel=order:1`, 'POST', { 'content-type': 'application/json' }, sample.replace(/"note":"[^"]*"/, `"note":"${note}"`))).status;

export async function withServer<T>(start: () => Promise<Running>, fn: (srv: Running) => Promise<T>): Promise<T> {
  const srv = await start();
  try {
    return await fn(srv);
  } finally {
    await srv.stop();
  }
}

export const startRaw = (kind: 'ws' | 'sse') => () => startBaseline(kind === 'ws' ? 'ws-raw.ts' : 'sse-raw.ts', '/healthz');

/** The libraries users would pick instead (bench/baseline): Socket.IO 4 for WebSocket, better-sse for SSE. */
export const startPeer = (kind: 'ws' | 'sse') => () => startBaseline(kind === 'ws' ? 'socketio.ts' : 'better-sse.ts', '/healthz');

/** The floor under CPU per delivered message (bench/baseline/ws-floor.ts, sse-floor.ts): one socket.write per delivery. */
export const startFloor = (kind: 'ws' | 'sse') => () => startBaseline(kind === 'ws' ? 'ws-floor.ts' : 'sse-floor.ts', '/healthz');
