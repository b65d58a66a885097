/**
 * The spec-client model test: a client that knows only the contract's wire
 * rule — keep the last seq per topic; seq = last + 1: apply; seq <= last: drop;
 * seq > last + 1: a gap, GET the order; `resync`: GET the order and continue from its
 * seq — over random schedules of writes, drops, resumes (WebSocket `since` in the URL
 * and in `subscribe`, SSE `Last-Event-ID`), several topics per connection, `since` 0,
 * `since` ahead of the topic, and a ring of 3 so long outages overflow it.
 *
 * It must end with every topic at the server's head, having applied every event exactly
 * once in order, or continued after a resync the server owed it (its since older than
 * the ring or ahead of the topic). A gap, an unowed resync or a `subscribed` the rules
 * would take for an event all fail the run: a spec-following client never needs them.
 *
 * The SDK's realtime client is such a client and runs the same schedules, and so does a
 * rules-only client of the GraphQL subscription (graphql-transport-ws on /graphql, one
 * `orderEvents(id, since)` per topic on one connection).
 * Runs on SQLite, and on PostgreSQL in the `postgres` jest project.
 */
import fc from 'fast-check';
import WebSocket from 'ws';
import { streamOrder, type OrderStream } from '@orderline/sdk';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, touch } from '../support/streams';

const RING = 3; // REPLAY_RATE 1 x REPLAY_WINDOW_S 3
const RUNS = Number(process.env.MODEL_RUNS ?? 12);
/** Replays a failing run: MODEL_SEED and MODEL_PATH as fast-check printed them. */
const REPLAY = process.env.MODEL_SEED ? { seed: Number(process.env.MODEL_SEED), path: process.env.MODEL_PATH, endOnFailure: true } : {};

type Entry = { kind: 'event'; seq: number } | { kind: 'resync'; seq: number; owed: boolean } | { kind: 'claim'; seq: number } | { kind: 'violation'; what: string };
type Op = { op: 'write'; topic: number; n: number } | { op: 'drop' } | { op: 'resume'; viaUrl: boolean } | { op: 'ahead'; topic: number; k: number } | { op: 'settle' };

interface Client {
  /** The last seq applied per topic. */
  last(topic: number): number;
  readonly log: Entry[][];
  connect(viaUrl: boolean): Promise<void>;
  drop(): Promise<void>;
  /** While disconnected: the client's position for a topic is ahead of the topic (e.g. restored from elsewhere). */
  claim?(topic: number, seq: number): void;
  connected: boolean;
  close(): void;
}

/** The rules, per message, for one topic; `since` is what this subscription resumed from. */
class SpecRules {
  readonly log: Entry[][];
  private readonly lastSeq: number[];
  private readonly since: number[];
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly srv: TestServer,
    private readonly ids: number[],
  ) {
    this.log = ids.map(() => []);
    this.lastSeq = ids.map(() => 0); // seen nothing
    this.since = ids.map(() => 0);
  }

  last = (t: number) => this.lastSeq[t];
  resumed = (t: number) => (this.since[t] = this.lastSeq[t]);
  claim(t: number, seq: number) {
    this.lastSeq[t] = seq;
    this.log[t].push({ kind: 'claim', seq });
  }
  /** Messages are handled one at a time, a GET finishing before the next (as a real client must). */
  handle(t: number, type: string, seq: number | null): void {
    this.chain = this.chain.then(() => this.apply(t, type, seq));
  }
  settled = () => this.chain;

  private async get(t: number): Promise<void> {
    const res = await this.srv.fetch(`/v2/orders/${this.ids[t]}`);
    await res.arrayBuffer();
  }

  private async apply(t: number, type: string, seq: number | null): Promise<void> {
    const last = this.lastSeq[t];
    if (type === 'error' || seq === null) {
      this.log[t].push({ kind: 'violation', what: `${type} ${seq}` });
      return;
    }
    if (type === 'resync') {
      await this.get(t);
      const since = this.since[t];
      this.log[t].push({ kind: 'resync', seq, owed: since < seq - RING || since > seq });
      this.lastSeq[t] = seq;
      return;
    }
    // Every other message is judged by its seq alone, as the contract's wire rule says.
    if (seq <= last) return;
    if (seq > last + 1) {
      await this.get(t);
      this.log[t].push({ kind: 'violation', what: `gap: ${type} ${seq} after ${last}` });
      this.lastSeq[t] = seq;
      return;
    }
    if (type === 'subscribed' || type === 'unsubscribed') {
      // A rules-only client takes seq last + 1 as the next event: the real one would then be dropped.
      this.log[t].push({ kind: 'violation', what: `${type} ${seq} taken for an event after ${last}` });
      this.lastSeq[t] = seq;
      return;
    }
    this.log[t].push({ kind: 'event', seq });
    this.lastSeq[t] = seq;
  }
}

function wsClient(srv: TestServer, ids: number[]): Client {
  const rules = new SpecRules(srv, ids);
  let ws: WebSocket | undefined;
  const c: Client = {
    log: rules.log,
    last: rules.last,
    connected: false,
    claim: (t, seq) => rules.claim(t, seq),
    async connect(viaUrl) {
      await rules.settled();
      // The URL's since belongs to the first subscribe; the others name their own.
      const url = `${srv.url.replace('http', 'ws')}/orders${viaUrl ? `?since=${rules.last(0)}` : ''}`;
      const sock = new WebSocket(url, { headers: { authorization: `Bearer ${srv.alice.token}` } });
      ws = sock;
      sock.on('message', (d) => {
        const m = JSON.parse((d as Buffer).toString()) as { type: string; channel: string; seq: number | null };
        rules.handle(ids.indexOf(Number(m.channel.slice('order:'.length))), m.type, m.seq);
      });
      sock.on('close', () => {
        if (ws === sock) c.connected = false;
      });
      await new Promise((resolve, reject) => {
        sock.once('open', resolve);
        sock.once('error', reject);
      });
      c.connected = true;
      ids.forEach((id, t) => {
        rules.resumed(t);
        sock.send(JSON.stringify({ type: 'subscribe', channel: `order:${id}`, ...(viaUrl && t === 0 ? {} : { since: rules.last(t) }) }));
      });
    },
    async drop() {
      ws?.terminate();
      c.connected = false;
      await rules.settled();
    },
    close: () => ws?.terminate(),
  };
  return c;
}

/** GraphQL over graphql-transport-ws: one connection, one `orderEvents` subscription per topic resuming with `since`. */
function graphqlWsClient(srv: TestServer, ids: number[]): Client {
  const rules = new SpecRules(srv, ids);
  let ws: WebSocket | undefined;
  const c: Client = {
    log: rules.log,
    last: rules.last,
    connected: false,
    claim: (t, seq) => rules.claim(t, seq),
    async connect() {
      await rules.settled();
      const sock = new WebSocket(`${srv.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
      ws = sock;
      const acked = new Promise<void>((resolve) => {
        sock.on('message', (d) => {
          const m = JSON.parse((d as Buffer).toString()) as { type: string; id?: string; payload?: { data?: { orderEvents?: { type: string; seq: number } } } };
          if (m.type === 'connection_ack') return resolve();
          const t = Number(m.id);
          const event = m.payload?.data?.orderEvents;
          if (m.type === 'next' && event) rules.handle(t, event.type, event.seq);
          else rules.handle(t, m.type, null); // an error, a complete or an empty result: never owed
        });
      });
      sock.on('close', () => {
        if (ws === sock) c.connected = false;
      });
      await new Promise((resolve, reject) => {
        sock.once('open', resolve);
        sock.once('error', reject);
      });
      sock.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${srv.alice.token}` } }));
      await acked;
      c.connected = true;
      ids.forEach((id, t) => {
        rules.resumed(t);
        const query = 'subscription ($id: ID!, $since: Int) { orderEvents(id: $id, since: $since) { seq type } }';
        sock.send(JSON.stringify({ id: String(t), type: 'subscribe', payload: { query, variables: { id: String(id), since: rules.last(t) } } }));
      });
    },
    async drop() {
      ws?.terminate();
      c.connected = false;
      await rules.settled();
    },
    close: () => ws?.terminate(),
  };
  return c;
}

function sseClient(srv: TestServer, ids: number[]): Client {
  const rules = new SpecRules(srv, ids);
  let aborts: AbortController[] = [];
  const c: Client = {
    log: rules.log,
    last: rules.last,
    connected: false,
    claim: (t, seq) => rules.claim(t, seq),
    async connect() {
      await rules.settled();
      aborts = ids.map(() => new AbortController());
      await Promise.all(
        ids.map(async (id, t) => {
          rules.resumed(t);
          const res = await srv.fetch(`/api/orders/${id}/stream`, { headers: { accept: 'text/event-stream', 'last-event-id': String(rules.last(t)) }, signal: aborts[t].signal });
          if (res.status !== 200) throw new Error(`SSE ${res.status}`);
          void (async () => {
            const reader = res.body!.getReader();
            const decoder = new TextDecoder();
            let buf = '';
            try {
              for (;;) {
                const { value, done } = await reader.read();
                if (done) break;
                buf += decoder.decode(value, { stream: true });
                let cut: number;
                while ((cut = buf.indexOf('\n\n')) >= 0) {
                  const block = buf.slice(0, cut);
                  buf = buf.slice(cut + 2);
                  const field = (k: string) =>
                    block
                      .split('\n')
                      .find((l) => l.startsWith(`${k}:`))
                      ?.slice(k.length + 1)
                      .trim();
                  const id = field('id');
                  if (id !== undefined) rules.handle(t, field('event') ?? 'message', Number(id));
                }
              }
            } catch {
              // aborted: dropped by the test
            }
          })();
        }),
      );
      c.connected = true;
    },
    async drop() {
      for (const a of aborts) a.abort();
      c.connected = false;
      await rules.settled();
    },
    close: () => aborts.forEach((a) => a.abort()),
  };
  return c;
}

/** The SDK's client, one stream per topic; a drop is the server cutting every connection. */
function sdkClient(srv: TestServer, ids: number[], transport: 'ws' | 'sse'): Client {
  const log: Entry[][] = ids.map(() => []);
  const streams: OrderStream[] = ids.map((orderId, t) => {
    const holder: { s?: OrderStream } = {};
    holder.s = streamOrder({
      baseUrl: srv.url,
      token: srv.alice.token,
      orderId,
      transport,
      since: 0,
      WebSocket, // the ws package as it is: no cast
      backoff: { baseMs: 5, capMs: 50 },
      onEvent: (m) => log[t].push({ kind: 'event', seq: m.seq }),
      // The SDK has adopted the resync's seq (or the GET's newer revision) before calling onResync.
      onResync: () => log[t].push({ kind: 'resync', seq: holder.s!.lastSeq, owed: true }),
      onFatal: (e) => log[t].push({ kind: 'violation', what: e.message }),
    });
    return holder.s;
  });
  return {
    log,
    last: (t) => streams[t].lastSeq,
    connected: true,
    async connect() {
      // it reconnects by itself
    },
    async drop() {
      srv.realtime.dropConnections();
    },
    close: () => streams.forEach((s) => s.close()),
  };
}

const schedule = (topics: number) =>
  fc.array(
    fc.oneof(
      { weight: 4, arbitrary: fc.record({ op: fc.constant('write' as const), topic: fc.nat(topics - 1), n: fc.integer({ min: 1, max: 4 }) }) },
      { weight: 2, arbitrary: fc.constant({ op: 'drop' as const }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant('resume' as const), viaUrl: fc.boolean() }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('ahead' as const), topic: fc.nat(topics - 1), k: fc.integer({ min: 1, max: 5 }) }) },
      { weight: 1, arbitrary: fc.constant({ op: 'settle' as const }) },
    ),
    { minLength: 1, maxLength: 14 },
  ) as fc.Arbitrary<Op[]>;

async function until(cond: () => boolean, what: () => string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Walks one topic's log: each event is last + 1, each resync owed; it ends at the head. */
function check(log: Entry[], head: number, sdk: boolean): void {
  let cur = 0;
  for (const e of log) {
    if (e.kind === 'violation') throw new Error(`${e.what} in ${JSON.stringify(log)}`);
    if (e.kind === 'claim') cur = e.seq;
    else if (e.kind === 'resync') {
      if (!e.owed) throw new Error(`resync to ${e.seq} the server did not owe (since ${cur}) in ${JSON.stringify(log)}`);
      if (sdk && e.seq < cur) throw new Error(`SDK resync went back from ${cur} to ${e.seq}`);
      cur = e.seq;
    } else {
      if (e.seq !== cur + 1) throw new Error(`event ${e.seq} after ${cur} in ${JSON.stringify(log)}`);
      cur = e.seq;
    }
  }
  if (cur !== head) throw new Error(`ended at ${cur}, head ${head}: ${JSON.stringify(log)}`);
}

describe('spec-client model: never a lost, repeated or silently skipped event (generated schedules)', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({ REPLAY_RATE: '1', REPLAY_WINDOW_S: String(RING), ACCEPT_RATE: '100000', ACCEPT_BURST: '100000' });
  });
  afterAll(() => srv.close());

  const cases = [
    ['WebSocket, rules-only client', (ids: number[]) => wsClient(srv, ids), false],
    ['SSE, rules-only client', (ids: number[]) => sseClient(srv, ids), false],
    ['GraphQL subscription (graphql-transport-ws), rules-only client', (ids: number[]) => graphqlWsClient(srv, ids), false],
    ['WebSocket, the SDK', (ids: number[]) => sdkClient(srv, ids, 'ws'), true],
    ['SSE, the SDK', (ids: number[]) => sdkClient(srv, ids, 'sse'), true],
  ] as const;

  it.each(cases)(
    '%s',
    async (_name, makeClient, sdk) => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 3 }).chain((topics) => fc.tuple(fc.constant(topics), schedule(topics))),
          async ([topics, ops]) => {
            const ids: number[] = [];
            for (let i = 0; i < topics; i++) ids.push((await createOrder(srv)).id);
            const head = ids.map(() => 1);
            const client = makeClient(ids);
            try {
              await client.connect(false);
              for (const o of ops) {
                if (o.op === 'write') {
                  await touch(srv, ids[o.topic], o.n);
                  head[o.topic] += o.n;
                } else if (o.op === 'drop' && client.connected) await client.drop();
                else if (o.op === 'resume' && !client.connected) await client.connect(o.viaUrl);
                else if (o.op === 'ahead' && !client.connected && client.claim) client.claim(o.topic, head[o.topic] + o.k);
                else if (o.op === 'settle')
                  await until(
                    () => ids.every((_, t) => client.last(t) === head[t]) || !client.connected,
                    () => 'settle',
                  );
              }
              if (!client.connected) await client.connect(false);
              await until(
                () => ids.every((_, t) => client.last(t) === head[t]),
                () => `heads ${head.join(',')} last ${ids.map((_, t) => client.last(t)).join(',')} logs ${JSON.stringify(client.log)}`,
              );
              ids.forEach((_, t) => check(client.log[t], head[t], sdk));
            } finally {
              client.close();
            }
          },
        ),
        { numRuns: RUNS, ...REPLAY },
      );
    },
    300_000,
  );
});
