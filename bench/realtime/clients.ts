/** The client processes that hold the bench's stream connections (bench/lib/realtime-client.ts). */
import { type ClientCommand, type ClientStats, type OpenResult, type WsClient } from '../lib/realtime-client';
import { mergeHist, newHist } from '../lib/realtime-hist';
import { ProcessPool } from '../lib/processes';
import { type Running } from '../lib/server';
import { agent } from './servers';
import { OPEN_CONCURRENCY, PROCS } from './settings';
import { join } from 'node:path';
// ---- client processes -----------------------------------------------------------------------

/** The processes of bench/lib/realtime-client.ts; each reports `{type:'done', t}` to `onDone`. */
export class Clients extends ProcessPool<ClientCommand> {
  onDone: (t: number) => void = () => undefined;

  private constructor(n: number) {
    super(join(__dirname, '../lib/realtime-client.ts'), n, 'client', (m) => this.onDone((m as { t: number }).t));
  }

  static start(n: number): Clients {
    return new Clients(n);
  }

  /** `items` dealt round-robin to the processes. */
  private deal<T>(items: T[]): T[][] {
    return this.procs.map((_, i) => items.filter((_, k) => k % this.procs.length === i));
  }

  private static sum(rs: OpenResult[]): OpenResult {
    return {
      opened: rs.reduce((s, r) => s + r.opened, 0),
      failed: rs.reduce((s, r) => s + r.failed, 0),
      firstError: rs.find((r) => r.firstError)?.firstError,
      ms: Math.max(...rs.map((r) => r.ms)),
    };
  }

  async openWs(group: string, srv: Running, token: string, channels: string[], client: WsClient): Promise<OpenResult> {
    const url = `${srv.url.replace(/^http/, 'ws')}/orders`;
    const parts = this.deal(channels);
    return Clients.sum(await this.all<OpenResult>((i) => ({ cmd: 'ws-open', group, url, token, channels: parts[i], concurrency: OPEN_CONCURRENCY, client })));
  }

  async openSse(group: string, srv: Running, token: string, paths: string[]): Promise<OpenResult> {
    const u = new URL(srv.url);
    const parts = this.deal(paths);
    return Clients.sum(await this.all<OpenResult>((i) => ({ cmd: 'sse-open', group, host: u.hostname, port: Number(u.port), token, paths: parts[i], concurrency: OPEN_CONCURRENCY })));
  }

  async stats(): Promise<ClientStats & { perProc: ClientStats[] }> {
    const all = await this.all<ClientStats>({ cmd: 'stats' });
    const live: Record<string, number> = {};
    for (const s of all) for (const [k, v] of Object.entries(s.live)) live[k] = (live[k] ?? 0) + v;
    return {
      received: all.reduce((s, x) => s + x.received, 0),
      hist: all.reduce((h, x) => mergeHist(h, x.hist), newHist()),
      lastAt: Math.max(...all.map((x) => x.lastAt)),
      cpuUs: all.reduce((s, x) => s + x.cpuUs, 0),
      live,
      closedInRun: all.reduce((s, x) => s + x.closedInRun, 0),
      perProc: all,
    };
  }
}

/** BENCH_RT_CLIENT_PROCS client processes for `fn`; stopped after it (and the keep-alive agent closed). */
export async function withClients<T>(fn: (clients: Clients) => Promise<T>): Promise<T> {
  const clients = Clients.start(PROCS);
  try {
    return await fn(clients);
  } finally {
    await clients.stop();
    agent.destroy();
  }
}
