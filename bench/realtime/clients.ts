/** The client processes that hold the bench's stream connections (bench/lib/realtime-client.ts). */
import { type ClientCommand, type ClientStats, type OpenResult, type WsClient } from '../lib/realtime-client';
import { mergeHist, newHist } from '../lib/realtime-hist';
import { type Running, root } from '../lib/server';
import { agent } from './servers';
import { OPEN_CONCURRENCY, PROCS } from './settings';
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
// ---- client processes -----------------------------------------------------------------------

export type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

export class Clients {
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  onDone: (t: number) => void = () => undefined;

  private constructor(readonly procs: ChildProcess[]) {
    for (const p of procs) {
      p.on('message', (m: Reply | { type: 'done'; t: number }) => {
        if ('type' in m) return this.onDone(m.t);
        const w = this.waiting.get(m.id);
        if (!w) return;
        this.waiting.delete(m.id);
        if (m.ok) w.resolve(m.result);
        else w.reject(new Error(m.error));
      });
      p.once('exit', (code) => {
        for (const w of this.waiting.values()) w.reject(new Error(`client process exited (${code})`));
        this.waiting.clear();
      });
    }
  }

  static start(n: number): Clients {
    const procs = Array.from({ length: n }, () => fork(join(__dirname, '../lib/realtime-client.ts'), [], { cwd: root, execArgv: ['-r', 'tsx/cjs'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    process.once('exit', () => procs.forEach((p) => p.kill('SIGKILL')));
    return new Clients(procs);
  }

  get pids(): number[] {
    return this.procs.map((p) => p.pid!);
  }

  call<T>(i: number, cmd: ClientCommand): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.procs[i].send({ ...cmd, id });
    });
  }

  all<T>(cmd: ClientCommand | ((i: number) => ClientCommand)): Promise<T[]> {
    return Promise.all(this.procs.map((_, i) => this.call<T>(i, typeof cmd === 'function' ? cmd(i) : cmd)));
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

  stop(): Promise<void> {
    return Promise.all(
      this.procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once('exit', () => resolve());
            p.send({ cmd: 'exit', id: 0 });
            setTimeout(() => p.kill('SIGKILL'), 3000).unref();
          }),
      ),
    ).then(() => undefined);
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
