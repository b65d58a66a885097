/**
 * What the fuzzers talk to: this checkout's server, started in process (the default), or
 * a server already running elsewhere, so the same generated requests can be aimed at
 * another build (an older commit, a deployed instance):
 *
 *   FUZZ_TARGET=http://127.0.0.1:3901 FUZZ_TOKEN=<alice's token> FUZZ_TOKEN_2=<bob's token>
 *
 * Two accounts are needed (the fuzzers check that one never sees the other's orders);
 * `npm run token -- --account <name>` prints a token (on that server's store). The
 * contract judged is always this checkout's `contracts/`.
 */
import { startTestServer, TEST_STORE } from '../server';

export interface FuzzTarget {
  url: string;
  /** Where the orders live (an external target's is FUZZ_TARGET_STORE, default sqlite). */
  store: 'sqlite' | 'postgres';
  external: boolean;
  alice: { token: string };
  bob: { token: string };
  /** fetch with Alice's token unless `as` or an `authorization` header says otherwise. */
  fetch(path: string, init?: RequestInit & { as?: 'alice' | 'bob' | 'anonymous' }): Promise<Response>;
  close(): Promise<void>;
  /** Requests sent again after a reset of a reused connection (see `resent`). */
  resends: number;
}

/**
 * Generating a request can keep the event loop busy for seconds (filters over big
 * schemas), longer than the server keeps an idle connection open; fetch may then write
 * the next request on a connection the server is closing at that moment, and get a
 * reset for a request the server never read. Such a request is sent once more, on a new
 * connection, and counted; a server that resets a request itself resets it again, and
 * that second failure is the answer.
 */
function resent(send: (path: string, init: RequestInit & { as?: 'alice' | 'bob' | 'anonymous' }) => Promise<Response>, counter: { resends: number }) {
  return async (path: string, init: RequestInit & { as?: 'alice' | 'bob' | 'anonymous' } = {}): Promise<Response> => {
    try {
      return await send(path, init);
    } catch (err) {
      const code = ((err as { cause?: { code?: string } }).cause ?? {}).code;
      if (code !== 'ECONNRESET' && code !== 'UND_ERR_SOCKET') throw err;
      counter.resends++;
      return send(path, init);
    }
  };
}

export const EXTERNAL_TARGET = process.env.FUZZ_TARGET;

/**
 * FUZZ_COLLECT=1: a violation is recorded and the run goes on (each suite's last test
 * fails listing every kind found), instead of failing the property at the first one.
 * On by default against an external target, where the point is the list of findings.
 */
export const COLLECT = process.env.FUZZ_COLLECT !== undefined ? process.env.FUZZ_COLLECT === '1' : EXTERNAL_TARGET !== undefined;

/** The run's size: FUZZ_RUNS=<n> runs per property (each suite has its default), FUZZ_SEED=<n> another seed. */
export const runsOr = (fallback: number): number => Number(process.env.FUZZ_RUNS ?? fallback);
export const seedOr = (fallback: number): number => Number(process.env.FUZZ_SEED ?? fallback);

/** `demo`: the in-process server also gets the demo data (users, friends, posts, comments); an external one has what it has. */
export async function openFuzzTarget({ demo = false, env = {} }: { demo?: boolean; env?: Record<string, string> } = {}): Promise<FuzzTarget> {
  if (EXTERNAL_TARGET === undefined) {
    const s = await startTestServer(env);
    if (demo) await s.store.seedDemo();
    const target: FuzzTarget = { url: s.url, store: TEST_STORE, external: false, alice: s.alice, bob: s.bob, close: () => s.close(), resends: 0, fetch: (p, i) => s.fetch(p, i) };
    target.fetch = resent((p, i) => s.fetch(p, i), target);
    return target;
  }
  const url = EXTERNAL_TARGET.replace(/\/+$/, '');
  const alice = process.env.FUZZ_TOKEN;
  const bob = process.env.FUZZ_TOKEN_2;
  if (!alice || !bob) throw new Error('FUZZ_TARGET needs FUZZ_TOKEN and FUZZ_TOKEN_2: bearer tokens of two accounts on that server');
  const ready = await fetch(`${url}/healthz`).catch((err: unknown) => err as Error);
  if (ready instanceof Error || !ready.ok) throw new Error(`FUZZ_TARGET ${url} does not answer GET /healthz with a 2xx`);
  const target: FuzzTarget = {
    url,
    store: process.env.FUZZ_TARGET_STORE === 'postgres' ? 'postgres' : 'sqlite',
    external: true,
    alice: { token: alice },
    bob: { token: bob },
    resends: 0,
    fetch: (path, init = {}) => send(path, init),
    close: async () => undefined,
  };
  const send = (path: string, init: RequestInit & { as?: 'alice' | 'bob' | 'anonymous' }) => {
    const { as = 'alice', ...rest } = init;
    const headers = new Headers(rest.headers);
    if (as !== 'anonymous' && !headers.has('authorization')) headers.set('authorization', `Bearer ${as === 'alice' ? alice : bob}`);
    return fetch(url + path, { ...rest, headers });
  };
  target.fetch = resent(send, target);
  return target;
}
