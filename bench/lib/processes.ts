/**
 * Forked helper processes driven over IPC by request and reply (`{ ...cmd, id }` out,
 * `{ id, ok, result | error }` back): the realtime bench's client processes
 * (bench/realtime/clients.ts) and the soak's subscriber processes (bench/soak.ts) both
 * hold their connections in these, so the load never shares an event loop with the bench.
 * A message without an `id` goes to `onOther`; a process that exits fails what waits on it.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { setPriority } from 'node:os';
import { root } from './server';

export type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

export class ProcessPool<C extends object> {
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  readonly procs: ChildProcess[];

  /**
   * `n` processes of `script` (a .ts file, run with tsx), killed when this process exits.
   * `nice` (0-19) lowers their scheduling priority, so that on a machine shared with the
   * server they take only the CPU the server leaves (bench/storm.ts).
   */
  constructor(script: string, n: number, what: string, onOther: (m: unknown) => void = () => undefined, nice = 0) {
    this.procs = Array.from({ length: n }, () => fork(script, [], { cwd: root, execArgv: ['-r', 'tsx/cjs'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    process.once('exit', () => this.procs.forEach((p) => p.kill('SIGKILL')));
    if (nice !== 0) for (const p of this.procs) if (p.pid !== undefined) setPriority(p.pid, nice);
    for (const p of this.procs) {
      p.on('message', (m: Reply | { id?: undefined }) => {
        if (m.id === undefined) return onOther(m);
        const w = this.waiting.get(m.id);
        if (!w) return;
        this.waiting.delete(m.id);
        if (m.ok) w.resolve(m.result);
        else w.reject(new Error(m.error));
      });
      p.once('exit', (code) => {
        for (const w of this.waiting.values()) w.reject(new Error(`${what} process exited (${code})`));
        this.waiting.clear();
      });
    }
  }

  get pids(): number[] {
    return this.procs.map((p) => p.pid!);
  }

  call<T>(i: number, cmd: C): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.procs[i].send({ ...cmd, id });
    });
  }

  all<T>(cmd: C | ((i: number) => C)): Promise<T[]> {
    return Promise.all(this.procs.map((_, i) => this.call<T>(i, typeof cmd === 'function' ? cmd(i) : cmd)));
  }

  /** Asks every process to exit (`{ cmd: 'exit' }`, which each helper script answers by exiting); one still there 3 s later is killed. */
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
