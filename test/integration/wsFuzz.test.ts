/**
 * Realtime fuzzer, judged against contracts/asyncapi.yaml: the WebSocket channel
 * `/orders` (upgrade requests with generated paths, `since`, tokens; then client
 * messages generated from the subscribe and unsubscribe schemas, valid, broken one rule
 * at a time, or not messages at all; then frames broken at the protocol level, sent on a
 * bare socket, test/support/fuzz/rawWs.ts) and the SSE stream's request (query
 * parameters, Last-Event-ID, Accept). Every answer is judged: a refused upgrade or stream
 * is problem+json with a `code` and a status the channel lists; every server message is
 * valid against its schema (the generated validators); every refused client message is an
 * `error` message whose `code` is in the contract's enum, and the connection stays open
 * (a probe is answered after it); a close carries a code the contract lists. After every
 * test the server still serves a subscribe (never a crash).
 *
 * Seeded and bounded: FUZZ_RUNS=<n> (default 60) runs per property, FUZZ_SEED=<n>;
 * FUZZ_TARGET (test/support/fuzz/target.ts) aims it at another server.
 */
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { enforceRaw, newTally, type Expectation, type RawGap, type Received, type SentRequest } from '../support/fuzz/check';
import { frame, OPCODE, RawWs } from '../support/fuzz/rawWs';
import { COLLECT, openFuzzTarget, runsOr, seedOr, type FuzzTarget } from '../support/fuzz/target';
import * as asyncValidators from '../../generated/asyncapi/validators';
import { parseOrderId } from '../../src/orders';

const RUNS = runsOr(60);
const SEED = seedOr(11001);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const ASYNCAPI: any = parse(readFileSync(join(__dirname, '../../contracts/asyncapi.yaml'), 'utf8'));
/** The `error` message's codes, as the contract enumerates them. */
/** The codes the contract lists as sent today (an open set for clients: the server sends only these). */
const ERROR_CODES: string[] = ASYNCAPI.components.messages.ErrorMessage.payload.properties.code['x-extensible-enum'];
/** Close codes the channel's description lists (1013 slow consumer, 1001 shutdown, 1009 message too big, 1002 and 1007 from RFC 6455). */
const CONTRACT_CLOSE_CODES = [...new Set([...(ASYNCAPI.channels.orders.description as string).matchAll(/\b(1\d{3})\b/g)].map((m) => Number(m[1])))];
/** The statuses the channel lists for a refused upgrade. */
const UPGRADE_STATUSES = [400, 401, 404, 503];
/** A subscribe message's size limit, as the channel's description states it ("over 4096 bytes"). */
const MAX_MESSAGE = Number(/over (\d+) bytes/.exec(ASYNCAPI.channels.orders.description as string)?.[1] ?? NaN);

const SERVER_VALIDATORS: Record<string, (m: unknown) => boolean> = {
  error: asyncValidators.validateErrorMessage,
  subscribed: asyncValidators.validateSubscribedMessage,
  unsubscribed: asyncValidators.validateUnsubscribedMessage,
  resync: asyncValidators.validateResyncMessage,
  'order.created': asyncValidators.validateOrderEventMessage,
  'order.updated': asyncValidators.validateOrderEventMessage,
  'order.cancelled': asyncValidators.validateOrderEventMessage,
};

/** Where the service and the contract's text disagree, reported rather than failed (none now). */
const GAPS: readonly RawGap[] = [];

let s: FuzzTarget;
const tally = newTally(COLLECT);
const started = Date.now();
let own: number;
let bobs: number;
let probes = 0;
let frames = 0;

const wsBase = () => s.url;
const auth = (token = s.alice.token) => ({ Authorization: `Bearer ${token}` });

beforeAll(async () => {
  s = await openFuzzTarget();
  const create = async (as: 'alice' | 'bob') => {
    const res = await s.fetch('/orders', { method: 'POST', as, headers: { 'content-type': 'application/json' }, body: '{"note":"ws fuzz"}' });
    if (res.status !== 201) throw new Error(`setup: create answered ${res.status}`);
    return ((await res.json()) as { id: number }).id;
  };
  own = await create('alice');
  bobs = await create('bob');
});

afterAll(async () => {
  await s?.close();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(
    [
      `ws fuzz (${s?.external ? `external ${s.url}` : s?.store}, seed ${SEED}, ${RUNS} runs per property): ${tally.requests} exchanges, ${frames} frames sent, ${probes} probes, ${tally.checks} checks, ${seconds} s`,
      ...[...tally.byOperation.entries()].map(([label, t]) => `  ${label}: ${t.requests}, ${[...t.statuses.entries()].map(([st, n]) => `${st}x${n}`).join(' ')}`),
      `KNOWN_GAPS (${GAPS.length}):`,
      ...GAPS.map((g) => {
        const hit = tally.gapHits.get(g.id);
        return `  ${g.id}: ${hit ? `${hit.count} hits, e.g. ${hit.example}` : 'not observed this run'}\n    ${g.reason}`;
      }),
      ...(tally.findings.size > 0 ? [`FINDINGS (${tally.findings.size} kinds, collect mode):`, ...tally.findings.lines()] : []),
    ].join('\n'),
  );
});

/** An exchange as the shared oracle sees it: the status (101, a refusal's, or 1000 + nothing for a message), and the text. */
const asReceived = (status: number, text: string, headers: Record<string, string> = {}): Received => ({ status, headers: new Headers(headers), text });

/** Every server message so far obeys its schema; every `error` has a code from the contract's enum. */
function messageRules(ws: RawWs): Expectation[] {
  const out: Expectation[] = [];
  for (const m of ws.messages()) {
    const validate = typeof m.type === 'string' ? SERVER_VALIDATORS[m.type] : undefined;
    out.push({ ok: validate !== undefined && validate(m), rule: 'server-message-schema', detail: `a server message its schema does not allow: ${JSON.stringify(m).slice(0, 300)}` });
    if (m.type === 'error') out.push({ ok: ERROR_CODES.includes(m.code as string), rule: 'error-code-listed', detail: `error code ${String(m.code)} is not in ${ERROR_CODES.join(', ')}` });
  }
  const code = ws.closeCode();
  if (code !== undefined) out.push({ ok: CONTRACT_CLOSE_CODES.includes(code), rule: 'close-code-listed', detail: `closed ${code}; the channel lists ${CONTRACT_CLOSE_CODES.join(', ')}` });
  return out;
}

/** Sends a probe (an unsubscribe of a channel never subscribed) and waits for its answer: the connection is open and its earlier answers are in. */
async function probe(ws: RawWs): Promise<boolean> {
  const channel = `order:${900_000_000 + ++probes}`;
  ws.text(JSON.stringify({ type: 'unsubscribe', channel }));
  frames++;
  return ws.until(() => ws.messages().some((m) => m.channel === channel));
}

async function open(path = '/orders', headers: Record<string, string> = auth()): Promise<RawWs> {
  const u = await RawWs.open(wsBase(), path, headers);
  if (!u.ok) throw new Error(`upgrade refused: ${u.status} ${u.body}`);
  return u.ws;
}

/** The server still serves: a fresh connection subscribes to Alice's order. */
async function stillServes(label: string): Promise<void> {
  const ws = await open();
  ws.text(JSON.stringify({ type: 'subscribe', channel: `order:${own}` }));
  const ok = await ws.until(() => ws.messages().some((m) => m.type === 'subscribed'));
  ws.close();
  enforceRaw(tally, GAPS, 'health', { method: 'WS', path: '/orders', headers: {}, intent: `still serving after ${label}` }, asReceived(ok ? 101 : 0, ''), [
    { ok, rule: 'still-serves', detail: `after ${label}, a fresh subscribe is not answered` },
  ]);
}

const params = (i: number, runs = RUNS) => ({ numRuns: runs, seed: SEED + i, endOnFailure: process.env.FUZZ_SHRINK === undefined });

// ---------------------------------------------------------------------------------------

describe('ws fuzz: the upgrade', () => {
  const sinceArb = fc.oneof(
    fc.constant(undefined),
    fc.constantFrom('0', '1', '3', '9007199254740991').map((v) => ({ v, valid: true })),
    fc.constantFrom('-1', '1.5', '01', 'abc', '', ' 1', '1e3', '0x1', '9007199254740992', '99999999999999999999', '%00', '１').map((v) => ({ v, valid: false })),
  );
  const tokenArb = fc.constantFrom('header', 'query', 'none', 'bad header', 'bad query', 'empty query', 'Basic');
  const pathArb = fc.oneof(
    { arbitrary: fc.constant('/orders'), weight: 4 },
    { arbitrary: fc.constantFrom('/orders/', '/ORDERS', '/Orders', '//orders', '/orders/1', '/order', '/graphql/x', '/api/orders/1/stream'), weight: 1 },
  );

  it('paths, since and tokens: 101 or a listed refusal in problem+json', async () => {
    await fc.assert(
      fc.asyncProperty(pathArb, sinceArb, tokenArb, async (path, since, token) => {
        const q = new URLSearchParams();
        if (since) q.set('since', since.v);
        if (token === 'query') q.set('access_token', s.alice.token);
        if (token === 'bad query') q.set('access_token', 'ol_nope.nope');
        if (token === 'empty query') q.set('access_token', '');
        const headers: Record<string, string> = token === 'header' ? auth() : token === 'bad header' ? auth('ol_nope.nope') : token === 'Basic' ? { Authorization: 'Basic YWxpY2U6eA==' } : {};
        const target = `${path}${q.size > 0 ? `?${q}` : ''}`;
        const u = await RawWs.open(wsBase(), target, headers);
        const authed = token === 'header' || token === 'query';
        // The channel's order of checks: the path (404), the token (401), `since` (400); 503 whenever the accept limiter says so.
        const want = path !== '/orders' ? 404 : !authed ? 401 : since && !since.valid ? 400 : 101;
        const req: SentRequest = { method: 'GET', path: target, headers, intent: `upgrade ${path}, since ${since ? JSON.stringify(since.v) : 'none'}, token ${token}` };
        const status = u.ok ? 101 : u.status;
        const res = asReceived(status, u.ok ? '' : u.body, u.ok ? {} : u.headers);
        enforceRaw(tally, GAPS, 'upgrade', req, res, [
          { ok: status === want || status === 503, rule: 'upgrade-status', detail: `expected ${want}, got ${status}` },
          { ok: u.ok || UPGRADE_STATUSES.includes(status), rule: 'upgrade-status-listed', detail: `${status} is not among ${UPGRADE_STATUSES.join(', ')}` },
        ]);
        if (u.ok) u.ws.close();
      }),
      params(0),
    );
  });
});

// ---------------------------------------------------------------------------------------

/** A client message the fuzzer means to send, and what the contract says it gets. */
interface Sent {
  intent: string;
  /** Frames to write (one message, possibly fragmented). */
  frames: Buffer[];
  /** The JSON sent, when it is one text message that parses. */
  json?: unknown;
  kind: 'text' | 'binary' | 'not-utf8' | 'too-big';
}

const channelArb = (ids: () => { own: number; bobs: number }) =>
  fc.oneof(
    { arbitrary: fc.constant('own').map(() => `order:${ids().own}`), weight: 4 },
    { arbitrary: fc.constant('bobs').map(() => `order:${ids().bobs}`), weight: 1 },
    { arbitrary: fc.constantFrom('order:987654321', 'order:9999999999999999', 'order:9007199254740991'), weight: 1 },
    { arbitrary: fc.constantFrom('order:0', 'order:01', 'order:-1', 'order:1.0', 'order:99999999999999999', 'ORDER:1', 'order:1 ', 'orders:1', 'order:', 'order:١', '', 'order:1\u0000'), weight: 2 },
  );
const sinceValueArb = fc.oneof({ arbitrary: fc.constantFrom(0, 1, 2, 9007199254740991), weight: 3 }, { arbitrary: fc.constantFrom<unknown>(-1, 1.5, '1', null, true, [], {}, 1e300, 9007199254740992), weight: 1 });

function messageArb(ids: () => { own: number; bobs: number }): fc.Arbitrary<Sent> {
  const text = (intent: string, json: unknown): Sent => ({ intent, frames: [frame(OPCODE.text, Buffer.from(JSON.stringify(json)))], json, kind: 'text' });
  const shaped = fc
    .record({
      type: fc.oneof({ arbitrary: fc.constantFrom('subscribe', 'unsubscribe'), weight: 6 }, { arbitrary: fc.constantFrom<unknown>('Subscribe', 'sub', '', 1, null), weight: 1 }),
      channel: fc.oneof({ arbitrary: channelArb(ids), weight: 8 }, { arbitrary: fc.constantFrom<unknown>(1, null, ['order:1'], { id: 1 }), weight: 1 }),
      since: fc.option(sinceValueArb, { nil: undefined, freq: 2 }),
      extra: fc.option(fc.constantFrom<[string, unknown]>(['id', 1], ['__proto__', { type: 'subscribe' }], ['constructor', {}], ['Type', 'subscribe']), { nil: undefined, freq: 6 }),
      drop: fc.option(fc.constantFrom('type', 'channel'), { nil: undefined, freq: 8 }),
    })
    .map(({ type, channel, since, extra, drop }) => {
      const m: Record<string, unknown> = { type, channel };
      if (since !== undefined) m.since = since;
      if (drop) delete m[drop];
      let textOf = JSON.stringify(m);
      // A member named __proto__ only survives as text.
      if (extra) textOf = `${textOf.slice(0, -1)},${JSON.stringify(extra[0])}:${JSON.stringify(extra[1])}}`;
      return { intent: `message ${textOf.slice(0, 120)}`, frames: [frame(OPCODE.text, Buffer.from(textOf))], json: JSON.parse(textOf) as unknown, kind: 'text' as const };
    });
  const garbage = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((v) => text(`JSON ${JSON.stringify(v).slice(0, 60)}`, v)),
    fc
      .string({ maxLength: 40 })
      .filter((t) => !isJson(t))
      .map((t): Sent => ({ intent: `not JSON ${JSON.stringify(t)}`, frames: [frame(OPCODE.text, Buffer.from(t))], kind: 'text' })),
    // Past the service's nesting bound (64) a frame is one no JSON reader takes: bad_message, as the contract says.
    fc.integer({ min: 100, max: 2000 }).map((d): Sent => ({ intent: `JSON ${d} deep`, frames: [frame(OPCODE.text, Buffer.from(`${'['.repeat(d)}${']'.repeat(d)}`))], kind: 'text' })),
    fc.constant<Sent>({ intent: 'a binary frame of JSON', frames: [frame(OPCODE.binary, Buffer.from('{"type":"subscribe","channel":"order:1"}'))], kind: 'binary' }),
    fc.constantFrom([0xff, 0xfe], [0xc3, 0x28], [0xed, 0xa0, 0x80]).map((b): Sent => ({
      intent: `text frame not UTF-8 (${Buffer.from(b).toString('hex')})`,
      frames: [frame(OPCODE.text, Buffer.concat([Buffer.from('{"type":"'), Buffer.from(b), Buffer.from('"}')]))],
      kind: 'not-utf8',
    })),
    fc.integer({ min: 1, max: 3000 }).map((n): Sent => ({
      intent: `a message ${n} bytes over the limit`,
      frames: [frame(OPCODE.text, Buffer.from(`{"type":"subscribe","channel":"order:1","x":"${'a'.repeat(MAX_MESSAGE + n - 45)}"}`))],
      kind: 'too-big',
    })),
    // The same subscribe in fragments (RFC 6455 5.4): one message.
    fc.integer({ min: 1, max: 20 }).map((cut): Sent => {
      const t = JSON.stringify({ type: 'subscribe', channel: `order:${ids().own}` });
      const b = Buffer.from(t);
      return {
        intent: `a subscribe in two fragments at ${cut}`,
        frames: [frame(OPCODE.text, b.subarray(0, cut), { fin: false }), frame(OPCODE.continuation, b.subarray(cut))],
        json: JSON.parse(t) as unknown,
        kind: 'text',
      };
    }),
  );
  return fc.oneof({ arbitrary: shaped, weight: 3 }, { arbitrary: garbage, weight: 2 });
}

function isJson(t: string): boolean {
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}

describe('ws fuzz: client messages', () => {
  it('each message gets its answer, refusals are coded `error`s, the connection stays open', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          messageArb(() => ({ own, bobs })),
          { minLength: 1, maxLength: 4 },
        ),
        async (sent) => {
          const ws = await open();
          const subscribed = new Set<string>();
          try {
            for (const m of sent) {
              const before = ws.messages().length;
              for (const f of m.frames) ws.send(f);
              frames += m.frames.length;
              const req: SentRequest = { method: 'WS', path: '/orders', headers: {}, body: m.intent, intent: m.intent };
              if (m.kind === 'too-big' || m.kind === 'not-utf8') {
                // The socket is failed: a close frame is the answer.
                await ws.until(() => ws.closeCode() !== undefined);
                const code = ws.closeCode();
                const want = m.kind === 'too-big' ? 1009 : 1007;
                enforceRaw(
                  tally,
                  GAPS,
                  `close (${m.kind})`,
                  req,
                  asReceived(code ?? 0, ''),
                  [{ ok: code === want, rule: 'close-code', detail: `expected close ${want}, got ${String(code)}` }, ...messageRules(ws)],
                  'websocket',
                );
                return;
              }
              const open = await probe(ws);
              const answers = ws.messages().slice(before);
              const expect = expected(m, subscribed);
              // A subscribe is answered after the store says whether the order is there: the answer may follow the probe's.
              if (expect.channel !== undefined)
                await ws.until(() =>
                  ws
                    .messages()
                    .slice(before)
                    .some((a) => a.channel === expect.channel && a.type !== 'unsubscribed'),
                );
              const got = ws
                .messages()
                .slice(before)
                .filter((a) => !(typeof a.channel === 'string' && a.channel.startsWith('order:9000')));
              const first = got.find((a) => a.type === 'error' || a.type === 'subscribed' || a.type === 'unsubscribed');
              enforceRaw(tally, GAPS, `message (${m.kind})`, req, asReceived(open ? 101 : 0, JSON.stringify(answers)), [
                { ok: open, rule: 'stays-open', detail: `after ${m.intent} the probe was not answered (closed ${String(ws.closeCode())})` },
                {
                  ok: first?.type === expect.type && (expect.code === undefined || first.code === expect.code),
                  rule: 'answer',
                  detail: `${m.intent}: expected ${expect.type}${expect.code ? ` ${expect.code}` : ''}, got ${JSON.stringify(first ?? null)}`,
                },
                ...messageRules(ws),
              ]);
              if (first?.type === 'subscribed') subscribed.add(first.channel as string);
              if (first?.type === 'unsubscribed') subscribed.delete(first.channel as string);
            }
          } finally {
            ws.close();
          }
        },
      ),
      params(100),
    );
    await stillServes('client messages');
  });
});

/** What the contract says a message gets (on a connection where `subscribed` holds the live channels). */
function expected(m: Sent, subscribed: Set<string>): { type: string; code?: string; channel?: string } {
  if (m.kind === 'binary' || m.json === undefined) return { type: 'error', code: 'bad_message' };
  if (!asyncValidators.validateClientMessage(m.json)) return { type: 'error', code: 'invalid_message' };
  const msg = m.json;
  // The channel's pattern admits 16-digit numbers above 2^53 - 1, which name no order.
  if (parseOrderId(msg.channel.slice('order:'.length)) === null) return { type: 'error', code: 'invalid_message' };
  if (msg.type === 'unsubscribe') return subscribed.has(msg.channel) ? { type: 'unsubscribed' } : { type: 'error', code: 'not_subscribed' };
  // The contract's Seq, read as I-JSON (RFC 7493): a since above 2^53 - 1 (1e300, 2^53) cannot be read back exactly.
  if (msg.since !== undefined && !Number.isSafeInteger(msg.since)) return { type: 'error', code: 'invalid_message' };
  if (subscribed.has(msg.channel)) return { type: 'error', code: 'already_subscribed' };
  return msg.channel === `order:${own}` ? { type: 'subscribed', channel: msg.channel } : { type: 'error', code: 'not_found', channel: msg.channel };
}

// ---------------------------------------------------------------------------------------

describe('ws fuzz: frames broken at the protocol level', () => {
  const subscribe = Buffer.from('{"type":"subscribe","channel":"order:1"}');
  const broken: [string, () => Buffer[], number | number[]][] = [
    ['an unmasked text frame', () => [frame(OPCODE.text, subscribe, { mask: false })], 1002],
    ['reserved opcode 0x3', () => [frame(0x3, subscribe)], 1002],
    ['reserved opcode 0xb (control)', () => [frame(0xb, Buffer.alloc(0))], 1002],
    ['RSV1 set without an extension', () => [frame(OPCODE.text, subscribe, { rsv: 0b100 })], 1002],
    ['RSV3 set', () => [frame(OPCODE.text, subscribe, { rsv: 0b001 })], 1002],
    ['a ping of 126 bytes', () => [frame(OPCODE.ping, Buffer.alloc(126))], 1002],
    ['a fragmented ping', () => [frame(OPCODE.ping, Buffer.from('x'), { fin: false })], 1002],
    ['a continuation with nothing to continue', () => [frame(OPCODE.continuation, subscribe)], 1002],
    ['a new text frame inside a fragmented one', () => [frame(OPCODE.text, Buffer.from('{"ty'), { fin: false }), frame(OPCODE.text, Buffer.from('pe":1}'))], 1002],
    ['a close with code 999', () => [frame(OPCODE.close, Buffer.from([0x03, 0xe7]))], 1002],
    ['a close with a one-byte body', () => [frame(OPCODE.close, Buffer.from([0x03]))], 1002],
    ['a close whose reason is not UTF-8', () => [frame(OPCODE.close, Buffer.from([0x03, 0xe8, 0xff, 0xfe]))], 1007],
    ['a length of 2^62', () => [frame(OPCODE.text, Buffer.alloc(0), { claimedLength: 2n ** 62n })], 1009],
    // The top bit must be 0 (RFC 6455 5.2): a protocol error, or, as `ws` reads it, a length past what it takes (1009).
    ['a length of 2^63 (the top bit set)', () => [frame(OPCODE.text, Buffer.alloc(0), { claimedLength: 2n ** 63n })], [1002, 1009]],
    ['fragments past the message limit', () => [frame(OPCODE.text, Buffer.alloc(3000, 0x61), { fin: false }), frame(OPCODE.continuation, Buffer.alloc(3000, 0x61))], 1009],
  ];

  it.each(broken.map(([intent, make, code]) => [intent, make, code] as const))('%s: closed with a code, nothing crashes', async (intent, make, want) => {
    const ws = await open();
    const bytes = make();
    for (const b of bytes) ws.send(b);
    frames += bytes.length;
    await ws.until(() => ws.closeCode() !== undefined);
    const code = ws.closeCode();
    ws.close();
    const req: SentRequest = { method: 'WS', path: '/orders', headers: {}, intent };
    enforceRaw(
      tally,
      GAPS,
      'protocol',
      req,
      asReceived(code ?? 0, ''),
      [{ ok: code !== undefined && [want].flat().includes(code), rule: 'close-code', detail: `${intent}: RFC 6455 wants close ${String(want)}, got ${String(code)}` }, ...messageRules(ws)],
      'websocket',
    );
    await stillServes(intent);
  });

  it('a ping is answered with its pong, and the connection stays open', async () => {
    const ws = await open();
    ws.send(frame(OPCODE.ping, Buffer.from('fuzz')));
    frames++;
    await ws.until(() => ws.frames.some((f) => f.opcode === OPCODE.pong));
    const pong = ws.frames.find((f) => f.opcode === OPCODE.pong);
    const open_ = await probe(ws);
    ws.close();
    enforceRaw(
      tally,
      GAPS,
      'protocol',
      { method: 'WS', path: '/orders', headers: {}, intent: 'ping' },
      asReceived(1000, ''),
      [
        { ok: pong?.payload.toString() === 'fuzz', rule: 'pong', detail: `pong ${String(pong?.payload)}` },
        { ok: open_, rule: 'stays-open', detail: 'after a ping the probe was not answered' },
      ],
      'websocket',
    );
  });
});

// ---------------------------------------------------------------------------------------

describe('sse fuzz: the stream request', () => {
  it('query parameters, Last-Event-ID and Accept: a stream that starts with `subscribed`, or a listed refusal', async () => {
    const qArb = fc.record({
      token: fc.constantFrom('header', 'query', 'both', 'none', 'bad query', 'empty query', 'twice'),
      extra: fc.option(fc.constantFrom<[string, string]>(['since', '1'], ['since', '-1'], ['Last-Event-ID', '2'], ['limit', '5'], ['zz', ''], ['access_token', '']), { nil: undefined }),
      lastEventId: fc.option(fc.constantFrom('0', '1', '9007199254740991', '-1', 'x', '1.5', '', ' 1', '9007199254740993'), { nil: undefined }),
      accept: fc.option(fc.constantFrom('text/event-stream', '*/*', 'text/*', 'application/json', 'text/html;q=1, text/event-stream;q=0'), { nil: undefined }),
      which: fc.constantFrom('own', 'bobs', 'missing', 'not an id'),
    });
    await fc.assert(
      fc.asyncProperty(qArb, async ({ token, extra, lastEventId, accept, which }) => {
        const id = which === 'own' ? String(own) : which === 'bobs' ? String(bobs) : which === 'missing' ? '987654321' : 'x1';
        const q = new URLSearchParams();
        if (token === 'query' || token === 'both') q.append('access_token', s.alice.token);
        if (token === 'twice') for (let i = 0; i < 2; i++) q.append('access_token', s.alice.token);
        if (token === 'bad query') q.append('access_token', 'ol_nope.nope');
        if (token === 'empty query') q.append('access_token', '');
        if (extra) q.append(extra[0], extra[1]);
        const headers: Record<string, string> = {};
        if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId;
        if (accept !== undefined) headers.Accept = accept;
        const path = `/api/orders/${id}/stream${q.size > 0 ? `?${q}` : ''}`;
        const res = await s.fetch(path, { headers, as: token === 'header' || token === 'both' ? 'alice' : 'anonymous' });
        let text = '';
        if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
          // The first event only: the stream does not end.
          const reader = res.body!.getReader();
          const decoder = new TextDecoder();
          while (!text.includes('\n\n')) {
            const { value, done } = await reader.read();
            if (done) break;
            text += decoder.decode(value, { stream: true });
          }
          await reader.cancel();
        } else text = await res.text();
        // The header, or one `access_token` (RFC 6750 3.1: both, or a repeated one, is 400 invalid_request).
        const tokens = q.getAll('access_token');
        const authed = token === 'header' || token === 'both' || (tokens.length === 1 && tokens[0] === s.alice.token);
        const leOk = lastEventId === undefined || (/^(0|[1-9][0-9]*)$/.test(lastEventId.trim()) && Number.isSafeInteger(Number(lastEventId.trim())));
        const acceptOk = accept === undefined || !/application\/json|text\/event-stream;q=0/.test(accept);
        // The channel lists the refusals "checked in that order": 401, 400 (an id not in canonical form), 404, 406, 400 (Last-Event-ID), then 503 (the limiter).
        // The header and access_token both (RFC 6750 3.1: more than one way): 400 before the token is judged.
        const twoWays = ((token === 'header' || token === 'both') && tokens.length > 0) || tokens.length > 1;
        const want = twoWays ? 400 : !authed ? 401 : which === 'not an id' ? 400 : which !== 'own' ? 404 : !acceptOk ? 406 : !leOk ? 400 : 200;
        const req: SentRequest = { method: 'GET', path, headers, intent: `stream ${which}, token ${token}, Last-Event-ID ${String(lastEventId)}, Accept ${String(accept)}${extra ? `, ${extra.join('=')}` : ''}` };
        const received = asReceived(res.status, text, Object.fromEntries(res.headers.entries()));
        const event = /event: (\w+)\ndata: (.*)\n/.exec(text);
        enforceRaw(tally, GAPS, 'sse', req, received, [
          { ok: res.status === want || res.status === 503, rule: 'sse-status', detail: `expected ${want}, got ${res.status}` },
          ...(res.status === 200 ? [{ ok: event?.[1] === 'subscribed' && SERVER_VALIDATORS.subscribed(JSON.parse(event[2])), rule: 'sse-first-event', detail: `the stream starts with ${text.slice(0, 200)}` }] : []),
        ]);
      }),
      params(300),
    );
  });
});

describe('sse fuzz: an empty Last-Event-ID', () => {
  // The property above meets it by chance; here it is sent every run.
  it('is judged like any value: 400', async () => {
    const path = `/api/orders/${own}/stream`;
    const headers = { 'Last-Event-ID': '' };
    const res = await s.fetch(path, { headers });
    const stream = res.headers.get('content-type')?.startsWith('text/event-stream') ?? false;
    const text = stream ? '' : await res.text();
    if (stream) await res.body?.cancel();
    const req: SentRequest = { method: 'GET', path, headers, intent: 'empty Last-Event-ID' };
    enforceRaw(tally, GAPS, 'sse', req, asReceived(res.status, text, Object.fromEntries(res.headers.entries())), [
      { ok: res.status === 400, rule: 'sse-status', detail: `an empty Last-Event-ID: expected 400, got ${res.status}` },
    ]);
  });
});

describe('ws fuzz: findings', () => {
  it('nothing was found (collect mode lists every kind here)', () => {
    expect(tally.findings.lines()).toEqual([]);
  });
});
