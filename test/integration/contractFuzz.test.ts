/**
 * Contract fuzzer: for every operation of the generated route table, requests generated
 * with fast-check from the operation's own schemas in contracts/openapi.yaml (valid ones,
 * and ones that break a single constraint), sent to a real server, and every response
 * judged against the contract (test/support/fuzz/check.ts): a declared status (401 and 429
 * wherever a token is required), a body valid for its status and media type (the route
 * table's validators), every 4xx `application/problem+json` with a `code`, never a 5xx,
 * HEAD answering as GET does. Then a stateful walk: create, read by Location, conditional
 * merge-patch, cancel, list.
 *
 * Beyond the schemas: every declared header sent empty, bodies nested thousands deep and
 * bytes that are not UTF-8, every method on every path (405 with `Allow`, OPTIONS alike
 * everywhere), other spellings of each path (case, trailing slash: 404), integers a double
 * cannot hold, and a refusal never names a number the request did not carry.
 *
 * Seeded and bounded: FUZZ_RUNS=<n> (default 12) runs per property, FUZZ_SEED=<n> another
 * seed. Known differences between the contract and the service are `KNOWN_GAPS` below:
 * each is reported, never silently passed; everything else fails. FUZZ_TARGET aims this
 * suite, graphqlFuzz.test.ts and wsFuzz.test.ts at a server already running
 * (test/support/fuzz/target.ts); there every violation is collected (FUZZ_COLLECT) and
 * the last test lists them by kind.
 *
 * ## What the fuzzers find on the code of b033d51
 *
 * The ten defects reported by hand against b033d51 (all fixed since). That commit builds
 * with today's node_modules (`npm run build`, no error), and was served with
 * `DATA_DIR=<dir> PORT=3901 DEMO=0 node dist/src/main.js`, two tokens from
 * `node dist/src/token.js --account alice` (and bob), then
 * `FUZZ_TARGET=http://127.0.0.1:3901 FUZZ_TOKEN=<alice> FUZZ_TOKEN_2=<bob> npx jest
 * test/integration/{contractFuzz,graphqlFuzz,wsFuzz}.test.ts --selectProjects sqlite`,
 * default seeds and runs, this checkout's contracts as the judge:
 *
 * | # | defect on b033d51                                         | found | by (test: rule)                                                   |
 * |---|-----------------------------------------------------------|-------|-------------------------------------------------------------------|
 * | 1 | 500: POST /orders, Idempotency-Key, 6,000-deep array      | yes   | bodies nested deep: 5xx (create, all versions, 6,000 and 20,000)  |
 * | 2 | 500: POST /graphql, `variables` 5,000 deep                | yes   | graphqlFuzz, variables of every shape: 5xx                        |
 * | 3 | empty `Idempotency-Key:` ignored (two orders)             | yes   | each declared header sent empty: expected-status (201, not 400)   |
 * | 4 | contract wrong about itself (openapi.json `type: string`; | yes   | KNOWN_GAPS then: all three (this checkout's contract said so too  |
 * |   | If-None-Match over 2000 chars 400 undeclared; Idempotency-|       | then; corrected since); the 256/257-character key is a boundary   |
 * |   | Key maxLength 257 vs 255)                                 |       | the generator now reaches                                         |
 * | 5 | HEAD 404/406 with `Content-Length: 0`                     | yes   | HEAD answers as GET does: head-length                             |
 * | 6 | invalid UTF-8 in a JSON body stored as U+FFFD, 201        | yes   | bodies nested deep, bytes not UTF-8: expected-status              |
 * | 7 | GET /graphql with a mutation: 405 text/plain, no code     | yes   | graphqlFuzz, GET with a mutation: graphql-json, graphql-code      |
 * | 8 | OPTIONS: 200 text/plain on REST, 405 on /graphql, stream  | yes   | every method: undeclared-method; OPTIONS alike on every path      |
 * | 9 | `/ORDERS/1`, `/orders/1/` served                          | yes   | other spellings of the path: path-variant                         |
 * |10 | Api-Version `9007199254740993`: 406 naming ...992; empty: | yes   | garbage headers: expected-status, refusal-names-another-number,   |
 * |   | 200; `100000000000000001`: 400 with a wrong message       |       | refusal-reason-applies (told "not canonical" where it is)         |
 *
 * On today's code the same suites pass with no known gap: items 4 and 8 were the
 * contract's text, corrected in a release; the last two gaps (a plain JSON body of the
 * other version on a negotiated path, U+0000 refused by PostgreSQL alone) went with
 * release 3.0.1.
 */
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { DEFAULT_BODY_LIMIT } from '../../src/http';
import { OPERATIONS, OPTIONS_OPERATIONS, type FuzzOperation } from '../support/fuzz/contract';
import { enforce, enforceRaw, newTally, type Expectation, type KnownGap, type RawGap, type Received, type SentRequest } from '../support/fuzz/check';
import { COLLECT, openFuzzTarget, runsOr, seedOr, type FuzzTarget } from '../support/fuzz/target';
import { garbagePlan, happyPlan, hostileBodies, mutantPlan, mutated, POOL_SIZE, validBody, validPlan, wireInvalid, wirePath, type Plan } from '../support/fuzz/plans';
import { validOf } from '../support/fuzz/arbitraries';
import * as validators from '../../generated/openapi/validators';

const RUNS = runsOr(12);
const SEED = seedOr(7001);

/**
 * Where the contract and the service disagree and the fix is not this test's to make
 * (a contract change must pass the compatibility gate). Each entry covers one operation
 * and one rule; it is counted and printed, and everything it does not match still fails.
 */
const KNOWN_GAPS: readonly KnownGap[] = []; // none today

/** Known gaps of the checks no operation owns (methods, path spellings): none today. */
const RAW_GAPS: readonly RawGap[] = [];

const byId = (id: string): FuzzOperation => {
  const op = OPERATIONS.find((o) => o.operationId === id);
  if (!op) throw new Error(`no operation ${id}`);
  return op;
};

let s: FuzzTarget;
const pool: number[] = [];
let bobOrder: number;
const tally = newTally(COLLECT);
const started = Date.now();

/** The one origin the server's CORS_ORIGINS lists: its preflights get the CORS fields, every other origin none. */
const APP_ORIGIN = 'http://app.fuzz.test';

beforeAll(async () => {
  s = await openFuzzTarget({ env: { CORS_ORIGINS: APP_ORIGIN } });
  const create = async (body: unknown, as: 'alice' | 'bob' = 'alice', path = '/orders') => {
    const res = await s.fetch(path, { method: 'POST', as, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`setup: create answered ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: number }).id;
  };
  const item = (sku: string, q = 1, p = 100) => ({ sku, quantity: q, unit_price_cents: p });
  pool.push(await create({}));
  pool.push(await create({ items: [item('a', 2, 250), item('b', 1, 999)], currency: 'USD', note: 'pool', discount: { code: 'TEN', percent: 10 } }));
  pool.push(await create({ items: [item('c')], discount_code: 'OLD' }, 'alice', '/v1/orders'));
  pool.push(await create({ note: null, discount: null }));
  // One paid, one cancelled (states the writes see differently).
  const paid = await create({ items: [item('p')] });
  const cancelled = await create({ items: [item('x')] });
  for (const [id, path, body] of [
    [paid, `/orders/${paid}`, JSON.stringify({ status: 'paid' })],
    [cancelled, `/orders/${cancelled}/cancel`, undefined],
  ] as const) {
    const tag = (await s.fetch(`/orders/${id}`)).headers.get('etag')!;
    const res = await s.fetch(path, { method: body ? 'PATCH' : 'POST', headers: { 'content-type': 'application/merge-patch+json', 'if-match': tag }, body });
    if (res.status !== 200) throw new Error(`setup: ${path} answered ${res.status}`);
  }
  pool.push(paid, cancelled);
  if (pool.length !== POOL_SIZE) throw new Error('pool size');
  bobOrder = await create({ note: 'bob' }, 'bob');
});

afterAll(async () => {
  await s?.close();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const lines = [
    `contract fuzz (${s?.external ? `external ${s.url}` : s?.store}, seed ${SEED}, ${RUNS} runs per property): ${OPERATIONS.length} operations, ${tally.requests} requests, ${tally.checks} checks, ${seconds} s, ${s?.resends ?? 0} resent after a connection reset`,
    ...[...tally.byOperation.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([id, t]) =>
          `  ${id}: ${t.requests} requests, statuses ${[...t.statuses.entries()]
            .sort(([a], [b]) => a - b)
            .map(([st, n]) => `${st}x${n}`)
            .join(' ')}`,
      ),
    `KNOWN_GAPS (${KNOWN_GAPS.length + RAW_GAPS.length}):`,
    ...[...KNOWN_GAPS, ...RAW_GAPS].map((g) => {
      const hit = tally.gapHits.get(g.id);
      return `  ${g.id}: ${hit ? `${hit.count} hits, e.g. ${hit.example}` : 'not observed this run'}\n    ${g.reason}`;
    }),
    ...(tally.findings.size > 0 ? [`FINDINGS (${tally.findings.size} kinds, collect mode):`, ...tally.findings.lines()] : []),
  ];
  console.log(lines.join('\n'));
});

// ---------------------------------------------------------------------------------------
// Sending a plan: tokens resolved against the server's state, then the exchange judged.

async function exchange(_op: { operationId: string }, req: SentRequest, as: 'alice' | 'bob' | 'anonymous' = 'alice'): Promise<Received> {
  const res = await s.fetch(req.path, { method: req.method, headers: req.headers, body: req.bytes ? new Uint8Array(req.bytes) : req.body, as });
  // A stream that started is not read here (it never ends): its head is the answer.
  if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, headers: res.headers, text: '' };
  }
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The GET operation that reads the resource a write or HEAD names (for `@current` and HEAD parity). */
/**
 * The GET whose ETag a write's `If-Match` names: the one on the write's own path, else on the
 * nearest path above it (a cancel's, or a new operation's `/orders/{orderId}/notes`: the order's),
 * with how many trailing segments of the path that drops.
 */
function readOpOf(op: FuzzOperation): { read: FuzzOperation; up: number } {
  const segments = op.route.path.split('/');
  for (let up = 0; up < segments.length - 1; up++) {
    const path = segments.slice(0, segments.length - up).join('/');
    const read = OPERATIONS.find((o) => o.route.path === path && o.route.method === 'GET');
    if (read) return { read, up };
  }
  throw new Error(`${op.operationId}: no GET on its path or above it, whose ETag its If-Match could name`);
}

async function freshOrder(): Promise<number> {
  const op = byId('createOrder');
  const req: SentRequest = { method: 'POST', path: '/orders', headers: { 'content-type': 'application/json' }, body: '{"items":[{"sku":"f","quantity":1,"unit_price_cents":5}]}', intent: 'setup: fresh order' };
  const res = await exchange(op, req);
  enforce(tally, KNOWN_GAPS, op, req, res, [{ ok: res.status === 201, rule: 'setup', detail: 'a fresh order is created' }]);
  return (JSON.parse(res.text) as { id: number }).id;
}

/** The plan as wire text: ids chosen, tokens replaced (each lookup itself judged). */
async function resolve(op: FuzzOperation, plan: Plan): Promise<SentRequest> {
  let idText = '';
  if (plan.id) idText = 'pool' in plan.id ? String(pool[plan.id.pool]) : 'fresh' in plan.id ? String(await freshOrder()) : encodeURIComponent(plan.id.literal);
  const path = wirePath(op, plan, idText);
  const headers: Record<string, string> = {};
  let current: string | undefined;
  for (const [name, value] of Object.entries(plan.headers)) {
    let v = value;
    if (v === '@uuid') v = randomUUID();
    if (v.includes('@current')) {
      if (current === undefined) {
        const { read, up } = readOpOf(op);
        const [wire, query = ''] = path.split('?');
        const readPath =
          wire
            .split('/')
            .slice(0, wire.split('/').length - up)
            .join('/') + (up === 0 && query ? `?${query}` : '');
        const lookup: SentRequest = { method: 'GET', path: readPath, headers: {}, intent: `lookup of ${name} for ${op.operationId}` };
        for (const h of ['Accept', 'Api-Version']) if (plan.headers[h] !== undefined && read.params.some((p) => p.name === h)) lookup.headers[h] = plan.headers[h];
        const res = await exchange(read, lookup);
        enforce(tally, KNOWN_GAPS, read, lookup, res);
        current = res.headers.get('etag') ?? '"no-such-tag"';
      }
      v = v.replace('@current', current);
    }
    headers[name] = v;
  }
  const query: [string, string][] = [];
  for (const [k, v] of plan.query) {
    if (v !== '@next') {
      query.push([k, v]);
      continue;
    }
    const lookup: SentRequest = { method: 'GET', path: `${path}?limit=1`, headers: {}, intent: `lookup of a cursor for ${op.operationId}` };
    const res = await exchange(op, lookup);
    enforce(tally, KNOWN_GAPS, op, lookup, res, [{ ok: res.status === 200, rule: 'setup', detail: 'a one-order page is served' }]);
    const next = (JSON.parse(res.text) as { _links: { next?: { href: string } } })._links.next?.href;
    query.push([k, next ? (new URL(next, s.url).searchParams.get('page') ?? 'none') : 'none']);
  }
  if (plan.body?.contentType !== undefined) headers['Content-Type'] = plan.body.contentType;
  const search = query.length > 0 ? `?${new URLSearchParams(query)}` : '';
  return { method: op.route.method, path: path + search, headers, body: plan.body?.text, bytes: plan.body?.bytes, intent: plan.intent };
}

const problemCode = (res: Received): string | undefined => {
  try {
    return (JSON.parse(res.text) as { code?: string }).code;
  } catch {
    return undefined;
  }
};

/**
 * A refusal that names a long number names one the request carries: a service that reads
 * `9007199254740993` as a double and answers about `9007199254740992` has changed the
 * client's value before judging it.
 */
function echoesNumbers(req: SentRequest, res: Received): Expectation {
  let named: string[] = [];
  if (res.status >= 400 && res.text.startsWith('{')) {
    try {
      const p = JSON.parse(res.text) as { detail?: unknown; errors?: { message?: unknown }[] };
      const texts = [p.detail, ...(Array.isArray(p.errors) ? p.errors.map((e) => e?.message) : [])].filter((t): t is string => typeof t === 'string');
      named = texts.flatMap((t) => t.match(/\d{10,}/g) ?? []);
    } catch {
      /* not JSON: the contract's rules judge it */
    }
  }
  const sent = [req.path, req.body ?? '', ...Object.values(req.headers)].join('\n');
  const foreign = named.filter((n) => !sent.includes(n));
  return { ok: foreign.length === 0, rule: 'refusal-names-another-number', detail: `the refusal names ${foreign.join(', ')}, which the request does not carry` };
}

/**
 * A refusal gives the reason that applies: a value sent in canonical decimal form
 * (`100000000000000001`) refused as an integer must be refused for its range, not told it
 * is not in canonical form.
 */
function reasonApplies(req: SentRequest, res: Received): Expectation {
  let wrong: string | undefined;
  if (res.status === 400 && res.text.startsWith('{')) {
    try {
      const p = JSON.parse(res.text) as { errors?: { pointer?: unknown; message?: unknown }[] };
      for (const e of Array.isArray(p.errors) ? p.errors : []) {
        const m = /^header:(.+)$/.exec(typeof e?.pointer === 'string' ? e.pointer : '');
        const sent = m ? Object.entries(req.headers).find(([k]) => k.toLowerCase() === m[1].toLowerCase())?.[1] : undefined;
        const says = typeof e?.message === 'string' ? e.message : '';
        if (sent !== undefined && /^-?(0|[1-9][0-9]*)$/.test(sent) && /canonical decimal form/.test(says) && !/2\^53/.test(says)) wrong = `${m![1]}: ${sent} is told "${says}"`;
      }
    } catch {
      /* not JSON: the contract's rules judge it */
    }
  }
  return { ok: wrong === undefined, rule: 'refusal-reason-applies', detail: `a canonical integer refused as not canonical (${wrong ?? ''})` };
}

/** The fuzzer's own rules for a plan, on top of the contract's. */
function expectations(op: FuzzOperation, plan: Plan, res: Received, req?: SentRequest): Expectation[] {
  const out: Expectation[] = [];
  if (req) out.push(echoesNumbers(req, res), reasonApplies(req, res));
  if (plan.expect) out.push({ ok: plan.expect.includes(res.status), rule: 'expected-status', detail: `${plan.intent} must be answered ${plan.expect.join(' or ')}, got ${res.status}` });
  if (plan.kind === 'valid') {
    // The service refuses as invalid nothing its contract accepts; an opaque page cursor may be refused (BAD_CURSOR).
    const code = problemCode(res);
    const refused = res.status === 400 && !(code === 'BAD_CURSOR' && plan.query.some(([k]) => k === 'page'));
    out.push({ ok: !refused, rule: 'valid-refused', detail: `a request valid per the contract answered 400 ${code ?? ''}` });
  }
  return out;
}

async function run(op: FuzzOperation, plan: Plan): Promise<void> {
  const req = await resolve(op, plan);
  const res = await exchange(op, req);
  enforce(tally, KNOWN_GAPS, op, req, res, expectations(op, plan, res, req));
}

/** Whether a happy plan's body meets the conditions the contract documents beyond its schema. */
function happyBody(op: FuzzOperation, plan: Plan): boolean {
  if (!plan.body?.text) return true;
  const body = JSON.parse(plan.body.text) as Record<string, unknown>;
  // Alice is served version 2 where the version is negotiated; a body of the other version is a 400 (a KNOWN_GAP).
  const version = op.route.path.startsWith('/v1/') ? 1 : 2;
  const family = op.operationId.replace(/V\d$/, '').replace('Order', '');
  const schema = (validators as unknown as Record<string, (x: unknown) => boolean>)[`Order${family[0].toUpperCase()}${family.slice(1)}V${version}`];
  if (schema && !schema(body)) return false;
  // From pending an order may stay pending, be paid or be cancelled (409 otherwise).
  if (body.status !== undefined && !['pending', 'paid', 'cancelled'].includes(body.status as string)) return false;
  // A fresh order has no discount: a patch creating one needs both members (409 otherwise).
  const d = body.discount as Record<string, unknown> | null | undefined;
  if (op.route.method === 'PATCH' && d && (d.code === undefined || d.percent === undefined)) return false;
  return true;
}

const params = (i: number) => ({ numRuns: RUNS, seed: SEED + i, endOnFailure: process.env.FUZZ_SHRINK === undefined });
const table = OPERATIONS.map((op, i) => [op.operationId, op, i] as const);

// ---------------------------------------------------------------------------------------

describe('contract fuzz: every operation of the route table', () => {
  it.each(table)('%s: valid requests', async (_, op, i) => {
    await fc.assert(
      fc.asyncProperty(validPlan(op), (plan) => run(op, plan)),
      params(i),
    );
  });

  it.each(table)('%s: the happy path succeeds', async (_, op, i) => {
    await fc.assert(
      fc.asyncProperty(happyPlan(op, happyBody), (plan) => run(op, plan)),
      { ...params(5000 + i), numRuns: Math.max(3, Math.ceil(RUNS / 3)) },
    );
  });

  it.each(table.filter(([, op]) => mutantPlan(op) !== undefined))('%s: one constraint broken', async (_, op, i) => {
    await fc.assert(
      fc.asyncProperty(mutantPlan(op)!, (plan) => run(op, plan)),
      { ...params(1000 + i), numRuns: RUNS * 2 },
    );
  });

  it.each(table.filter(([, op]) => garbagePlan(op) !== undefined))('%s: headers empty, very long, garbage', async (_, op, i) => {
    await fc.assert(
      fc.asyncProperty(garbagePlan(op)!, (plan) => run(op, plan)),
      params(2000 + i),
    );
  });

  it.each(table.filter(([, op]) => op.secured))('%s: no token, a bad token, another account', async (_, op) => {
    const base = await resolve(op, {
      kind: 'valid',
      intent: 'valid',
      id: { pool: 1 },
      query: [],
      headers: op.route.method === 'GET' || op.route.method === 'HEAD' ? {} : { 'If-Match': '*' },
      // A body the operation's schema takes (one drawn, the same every run), so that what is judged is the credentials, not the body: any operation's, a new one's too.
      body: op.body ? fc.sample(validBody(op), { numRuns: 1, seed: 7 })[0] : undefined,
    });
    for (const [as, headers, intent] of [
      ['anonymous', {}, 'no Authorization'],
      ['alice', { authorization: 'Bearer ol_nope.nope' }, 'an unknown bearer token'],
      ['alice', { authorization: 'Basic YWxpY2U6eA==' }, 'another scheme'],
    ] as const) {
      const req = { ...base, headers: { ...base.headers, ...headers }, intent };
      const res = await exchange(op, req, as);
      enforce(tally, KNOWN_GAPS, op, req, res, [
        { ok: res.status === 401, rule: 'expected-status', detail: `${intent} must be answered 401, got ${res.status}` },
        { ok: op.route.method === 'HEAD' || /^Bearer/i.test(res.headers.get('www-authenticate') ?? ''), rule: 'www-authenticate', detail: 'a 401 carries WWW-Authenticate: Bearer' },
      ]);
    }
    if (op.route.path.includes('{orderId}')) {
      // Bob's order is no order of Alice's: 404, and nothing of it shows.
      const req = { ...base, path: base.path.replace(String(pool[1]), String(bobOrder)), intent: "another account's order" };
      const res = await exchange(op, req);
      enforce(tally, KNOWN_GAPS, op, req, res, [{ ok: res.status === 404, rule: 'expected-status', detail: `another account's order must be 404, got ${res.status}` }]);
    }
  });

  it.each(table.filter(([, op]) => op.body !== null))('%s: bodies nested deep, bytes not UTF-8', async (_, op, i) => {
    // Each one, every run (the property above meets them by chance).
    const base = fc.sample(validPlan(op), { numRuns: 1, seed: SEED + 7000 + i })[0];
    for (const mut of hostileBodies(op)) await run(op, mutated(base, mut));
  });

  const withHeaders = table.filter(([, op]) => op.params.some((p) => p.in === 'header'));
  it.each(withHeaders)('%s: each declared header sent empty', async (_, op, i) => {
    // One request per header, the rest of it valid: an empty field is judged by its schema like any other value.
    const base = fc.sample(validPlan(op), { numRuns: 1, seed: SEED + 6000 + i })[0];
    for (const p of op.params.filter((q) => q.in === 'header')) {
      const plan: Plan = { ...base, kind: 'garbage', headers: { ...base.headers, [p.name]: '' }, intent: `header ${p.name} empty` };
      if (p.name !== 'Idempotency-Key' && plan.headers['Idempotency-Key'] !== undefined) plan.headers['Idempotency-Key'] = '@uuid';
      if (wireInvalid(op, p, '')) plan.expect = [400];
      await run(op, plan);
    }
  });

  const gets = table.filter(([, op]) => op.route.method === 'GET');
  it.each(gets)('%s: HEAD answers as GET does', async (_, getOp, i) => {
    const headOp = OPERATIONS.find((o) => o.route.path === getOp.route.path && o.route.method === 'HEAD') ?? getOp;
    await fc.assert(
      fc.asyncProperty(fc.oneof({ arbitrary: validPlan(getOp), weight: 3 }, { arbitrary: garbagePlan(getOp) ?? validPlan(getOp), weight: 1 }), async (plan) => {
        const req = await resolve(getOp, plan);
        const got = await exchange(getOp, req);
        enforce(tally, KNOWN_GAPS, getOp, req, got, expectations(getOp, plan, got));
        const headReq = { ...req, method: 'HEAD', intent: `HEAD of ${req.intent}` };
        const head = await exchange(headOp, headReq);
        const length = head.headers.get('content-length');
        const bodyLength = String(Buffer.byteLength(got.text));
        enforce(tally, KNOWN_GAPS, headOp, headReq, head, [
          { ok: head.status === got.status, rule: 'head-status', detail: `HEAD ${head.status}, GET ${got.status}` },
          { ok: got.status === 304 || length === bodyLength, rule: 'head-length', detail: `HEAD Content-Length ${length}, GET body ${bodyLength} bytes` },
          { ok: head.headers.get('content-type') === got.headers.get('content-type'), rule: 'head-type', detail: `HEAD Content-Type ${head.headers.get('content-type')}, GET ${got.headers.get('content-type')}` },
          { ok: head.headers.get('etag') === got.headers.get('etag'), rule: 'head-etag', detail: `HEAD ETag ${head.headers.get('etag')}, GET ${got.headers.get('etag')}` },
        ]);
      }),
      params(3000 + i),
    );
  });
});

// ---------------------------------------------------------------------------------------

describe('contract fuzz: stateful walk', () => {
  type Walk = { version: 1 | 2 | null; create: Record<string, unknown>; patch: Record<string, unknown> };
  const walkArb: fc.Arbitrary<Walk> = fc.constantFrom<1 | 2 | null>(null, 1, 2).chain((version) => {
    // The negotiated paths serve Alice the newest version (2): her bodies are version 2's there.
    const n = version ?? 2;
    const create = { $ref: `#/components/schemas/OrderCreateV${n}` };
    const patch = { $ref: `#/components/schemas/OrderPatchV${n}` };
    const cv = n === 1 ? validators.OrderCreateV1 : validators.OrderCreateV2;
    const pv = n === 1 ? validators.OrderPatchV1 : validators.OrderPatchV2;
    const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
    // A patch that leaves the status alone: cancel must still be allowed after it.
    return fc
      .record({
        version: fc.constant(version),
        create: (validOf(create, { medium: 'json' }) as fc.Arbitrary<Record<string, unknown>>).filter((v) => cv(json(v))),
        patch: (validOf(patch, { medium: 'json' }) as fc.Arbitrary<Record<string, unknown>>).map(({ status: _, ...rest }) => rest).filter((v) => pv(json(v))),
      })
      .filter(({ create, patch }) => {
        // DiscountPatch merges into the current discount; creating one needs both members (a 409 otherwise, as documented).
        const d = patch.discount as Record<string, unknown> | null | undefined;
        return !d || !!create.discount || (d.code !== undefined && d.percent !== undefined);
      });
  });

  it('create -> read by Location -> conditional merge-patch -> cancel (If-Match) -> list', async () => {
    await fc.assert(
      fc.asyncProperty(walkArb, async ({ version, create, patch }) => {
        const prefix = version ? `/v${version}` : '';
        const opOf = (family: string) => byId(`${family}${version ? `V${version}` : ''}`);
        const step = async (family: string, req: Omit<SentRequest, 'intent'>, intent: string, expect: number) => {
          const op = opOf(family);
          const sent = { ...req, intent };
          const res = await exchange(op, sent);
          enforce(tally, KNOWN_GAPS, op, sent, res, [{ ok: res.status === expect, rule: 'walk', detail: `${intent}: expected ${expect}, got ${res.status}` }]);
          return { res, body: res.text ? (JSON.parse(res.text) as Record<string, unknown>) : undefined };
        };
        const key = randomUUID();
        const created = await step('createOrder', { method: 'POST', path: `${prefix}/orders`, headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key }, body: JSON.stringify(create) }, 'walk: create', 201);
        // Refused under a known gap (reported there): this walk has nowhere to go.
        if (created.res.status !== 201) return;
        // The same request with the same Idempotency-Key: the stored response, byte for byte, marked replayed.
        const replay = await step(
          'createOrder',
          { method: 'POST', path: `${prefix}/orders`, headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key }, body: JSON.stringify(create) },
          'walk: create again, same key',
          201,
        );
        const location = created.res.headers.get('location')!;
        const id = created.body!.id as number;
        const wantLocation = `${prefix}/orders/${id}`;
        const read = await step('getOrder', { method: 'GET', path: location, headers: {} }, `walk: read ${location}`, 200);
        const etag = read.res.headers.get('etag')!;
        const sameOrder = JSON.stringify(read.body) === JSON.stringify(created.body);
        const notModified = await step('getOrder', { method: 'GET', path: location, headers: { 'If-None-Match': etag } }, 'walk: read with If-None-Match', 304);
        const stale = await step(
          'patchOrder',
          { method: 'PATCH', path: location, headers: { 'Content-Type': 'application/merge-patch+json', 'If-Match': '"0-0-stale"' }, body: JSON.stringify(patch) },
          'walk: patch with a stale If-Match',
          412,
        );
        const patched = await step(
          'patchOrder',
          { method: 'PATCH', path: location, headers: { 'Content-Type': 'application/merge-patch+json', 'If-Match': etag }, body: JSON.stringify(patch) },
          'walk: patch with the ETag',
          200,
        );
        const etag2 = patched.res.headers.get('etag')!;
        const applied = Object.entries(patch).every(([k, v]) => {
          if (k === 'discount' && v !== null) return typeof patched.body!.discount === 'object';
          return JSON.stringify(patched.body![k]) === JSON.stringify(v);
        });
        const oldTag = await step('cancelOrder', { method: 'POST', path: `${location}/cancel`, headers: { 'If-Match': etag } }, 'walk: cancel with the pre-patch ETag', 412);
        const cancelled = await step('cancelOrder', { method: 'POST', path: `${location}/cancel`, headers: { 'If-Match': etag2 } }, 'walk: cancel with the current ETag', 200);
        const again = await step('cancelOrder', { method: 'POST', path: `${location}/cancel`, headers: { 'If-Match': cancelled.res.headers.get('etag')! } }, 'walk: cancel again', 409);
        // The list, page by page, holds the order once, cancelled.
        let next: string | undefined = `${prefix}/orders?limit=100`;
        const seen: Record<string, unknown>[] = [];
        while (next) {
          const page = await step('listOrders', { method: 'GET', path: next, headers: {} }, `walk: list ${next}`, 200);
          const list = page.body as { orders: Record<string, unknown>[]; _links: { next?: { href: string } } };
          seen.push(...list.orders.filter((o) => o.id === id));
          next = list._links.next?.href;
        }
        const walkChecks: Expectation[] = [
          { ok: replay.res.text === created.res.text && replay.res.headers.get('idempotent-replayed') === 'true', rule: 'walk', detail: `the replay is not the stored response: ${replay.res.text}` },
          { ok: location === wantLocation, rule: 'walk', detail: `Location ${location}, expected ${wantLocation}` },
          { ok: sameOrder, rule: 'walk', detail: `read after create differs: ${JSON.stringify(read.body)} vs ${JSON.stringify(created.body)}` },
          { ok: etag === created.res.headers.get('etag'), rule: 'walk', detail: 'the create and the read carry the same ETag' },
          { ok: applied, rule: 'walk', detail: `patch ${JSON.stringify(patch)} not applied: ${JSON.stringify(patched.body)}` },
          { ok: etag2 !== etag, rule: 'walk', detail: 'a write changes the ETag' },
          { ok: cancelled.body?.status === 'cancelled' && !(cancelled.body?._links as Record<string, unknown>).cancel, rule: 'walk', detail: `cancel: ${JSON.stringify(cancelled.body)}` },
          { ok: seen.length === 1 && seen[0].status === 'cancelled', rule: 'walk', detail: `the list holds ${JSON.stringify(seen)}` },
        ];
        void [notModified, stale, oldTag, again];
        const op = opOf('getOrder');
        enforce(tally, KNOWN_GAPS, op, { method: 'GET', path: location, headers: {}, intent: 'walk: the steps together' }, read.res, walkChecks, { sent: false });
      }),
      { ...params(4000), numRuns: Math.max(4, Math.ceil(RUNS / 2)) },
    );
  });
});

describe('contract fuzz: a body sent to an operation that takes none', () => {
  // fetch sends no body with GET or HEAD: node:http does (framed by the Content-Length set here: it frames none for GET by itself), as curl and proxies may.
  function sendRaw(req: SentRequest): Promise<Received> {
    return new Promise((resolve, reject) => {
      const out = request(s.url + req.path, { method: req.method, headers: { ...req.headers, authorization: `Bearer ${s.alice.token}`, 'content-length': String(Buffer.byteLength(req.body ?? '')) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
          resolve({ status: res.statusCode ?? 0, headers, text: Buffer.concat(chunks).toString('utf8') });
        });
      });
      out.on('error', reject);
      out.end(req.body);
    });
  }
  const bodiless = OPERATIONS.filter((op) => op.body === null);
  const table = bodiless.map((op, i) => [op.operationId, op, i] as const);
  // Read and dropped up to the limit, 413 over it (declared): sizes on both sides of it.
  const size = fc.oneof(fc.integer({ min: 1, max: 4096 }), fc.integer({ min: DEFAULT_BODY_LIMIT - 8, max: DEFAULT_BODY_LIMIT + 8 }), fc.constant(4 * DEFAULT_BODY_LIMIT));
  it.each(table)('%s: the status it answers is declared; over the limit, 413', async (_, op, i) => {
    const id = await freshOrder(); // a cancel without If-Match is 428: nothing changes
    await fc.assert(
      fc.asyncProperty(size, async (n) => {
        const req: SentRequest = {
          method: op.route.method,
          path: wirePath(op, {}, String(id)),
          headers: { 'content-type': 'text/plain' },
          body: 'x'.repeat(n),
          intent: `a ${n}-byte body where none is taken`,
        };
        const res = await sendRaw(req);
        const over = n > DEFAULT_BODY_LIMIT;
        enforce(tally, KNOWN_GAPS, op, req, res, [{ ok: (res.status === 413) === over, rule: 'body-limit', detail: `${n} bytes (limit ${DEFAULT_BODY_LIMIT}): ${res.status}` }]);
      }),
      { ...params(8000 + i), numRuns: Math.min(RUNS, 6) },
    );
  });
});

describe('contract fuzz: OPTIONS on every path', () => {
  // Browsers send a preflight without credentials; any client may ask what a path allows.
  const headerArb = fc.record(
    {
      Origin: fc.constantFrom(APP_ORIGIN, 'http://elsewhere.fuzz.test', 'null'),
      'Access-Control-Request-Method': fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'x'),
      'Access-Control-Request-Headers': fc.constantFrom('if-match,content-type', 'authorization', 'x-unknown'),
      Authorization: fc.constantFrom('Bearer ol_nope.nope', 'Basic YWxpY2U6eA==', ''),
      'If-None-Match': fc.constantFrom('*', 'garbage', '"x"'),
      'Idempotency-Key': fc.constant('k'.repeat(300)),
    },
    { requiredKeys: [] },
  );
  const table = OPTIONS_OPERATIONS.map((op, i) => [op.operationId, op, i] as const);
  it.each(table)('%s: answers as the contract declares', async (_, op, i) => {
    const ids = op.params.filter((p) => p.in === 'path');
    await fc.assert(
      fc.asyncProperty(headerArb, fc.tuple(...ids.map((p) => fc.oneof(fc.constantFrom(...pool.map(String)), validOf(p.schema, { medium: 'path' }).map(String)))), async (headers, values) => {
        let path = op.path;
        ids.forEach((p, k) => (path = path.replace(`{${p.name}}`, values[k])));
        const clean = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== ''));
        const req: SentRequest = { method: 'OPTIONS', path, headers: clean, intent: 'OPTIONS' };
        const res = await exchange(op, req, 'anonymous');
        enforce(tally, KNOWN_GAPS, op, req, res, [], { allowedOrigin: APP_ORIGIN });
      }),
      params(6000 + i),
    );
  });
  it('declares OPTIONS on every path the route table serves', () => {
    expect(new Set(OPTIONS_OPERATIONS.map((o) => o.path))).toEqual(new Set(OPERATIONS.map((o) => o.route.path)));
  });
});

describe('contract fuzz: what no operation owns', () => {
  /** Every path template the service serves through its contracts, with the methods each declares. */
  const paths: { template: string; methods: Set<string>; rest: boolean; op?: FuzzOperation }[] = [];
  for (const op of OPERATIONS) {
    const known = paths.find((p) => p.template === op.route.path);
    if (known) known.methods.add(op.route.method);
    else paths.push({ template: op.route.path, methods: new Set([op.route.method]), rest: true, op });
  }
  // Served by the same pipeline, declared elsewhere: /graphql (GET and POST) and the SSE stream (asyncapi.yaml).
  paths.push({ template: '/graphql', methods: new Set(['GET', 'POST']), rest: false }, { template: '/api/orders/{orderId}/stream', methods: new Set(['GET']), rest: false });
  const concrete = (template: string) => {
    const op = paths.find((p) => p.template === template)?.op;
    return op ? wirePath(op, {}, String(pool[1])) : template.replace('{orderId}', String(pool[1]));
  };
  const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

  it.each(paths.map((p) => [p.template, p] as const))('%s: every method, Allow as answered', async (_, p) => {
    // HEAD is served wherever GET is (RFC 9110 9.3.2), /graphql and the stream included; OPTIONS on every path (the contract's one rule).
    const declared = new Set([...p.methods, 'OPTIONS', ...(p.methods.has('GET') ? ['HEAD'] : [])]);
    const answers = new Map<string, Received>();
    for (const method of METHODS) {
      const withBody = ['POST', 'PUT', 'PATCH'].includes(method);
      const req: SentRequest = { method, path: concrete(p.template), headers: withBody ? { 'Content-Type': 'application/json' } : {}, body: withBody ? '{}' : undefined, intent: `${method} on ${p.template}` };
      const res = await exchange(OPERATIONS[0], req);
      answers.set(method, res);
      const allow = new Set(
        (res.headers.get('allow') ?? '')
          .split(',')
          .map((m) => m.trim())
          .filter(Boolean),
      );
      const checks: Expectation[] = [];
      if (!declared.has(method)) {
        const want = [...declared].sort().join(', ');
        checks.push(
          { ok: res.status === 405, rule: 'undeclared-method', detail: `${method} is not declared on ${p.template}: 405 expected, got ${res.status} ${res.headers.get('content-type') ?? ''}` },
          { ok: [...allow].sort().join(', ') === want, rule: 'allow', detail: `Allow: ${res.headers.get('allow')} (expected ${want})` },
        );
      } else checks.push({ ok: res.status !== 405, rule: 'declared-method', detail: `${method} is declared on ${p.template}, answered 405` });
      // /graphql answers every method in GraphQL's shape, its 405s included (with `extensions.code`); every other path with problem+json.
      enforceRaw(tally, RAW_GAPS, `methods (${p.rest ? 'REST' : p.template})`, req, res, checks, p.template === '/graphql' ? 'graphql' : 'problem');
    }
    optionsAnswers.set(p.template, answers.get('OPTIONS')!);
  });

  /** OPTIONS on each path, as answered above: one behaviour for every path. */
  const optionsAnswers = new Map<string, Received>();
  it('OPTIONS is answered alike on every path', () => {
    const shapes = new Map<string, string[]>();
    for (const [path, res] of optionsAnswers) {
      const shape = `${res.status} ${res.headers.get('content-type')?.split(';')[0] ?? '(no body)'}`;
      shapes.set(shape, [...(shapes.get(shape) ?? []), path]);
    }
    const req: SentRequest = { method: 'OPTIONS', path: '(every path)', headers: {}, intent: 'OPTIONS alike everywhere' };
    const any = [...optionsAnswers.values()][0];
    enforceRaw(tally, RAW_GAPS, 'OPTIONS (all paths)', req, any, [
      { ok: shapes.size === 1, rule: 'options-alike', detail: `OPTIONS answered differently: ${[...shapes.entries()].map(([shape, ps]) => `${shape} on ${ps.join(' ')}`).join('; ')}` },
    ]);
  });

  /** Spellings of a served path that name no resource: paths match exactly (case, trailing slash, empty segments). */
  const variants = (path: string): [string, string][] => [
    ['upper case', path.toUpperCase()],
    ['first letter upper case', path.replace(/^\/(\w)/, (_, c: string) => `/${c.toUpperCase()}`)],
    ['trailing slash', `${path}/`],
    ['two trailing slashes', `${path}//`],
    ['doubled slash', path.replace(/^\/(\w+)\//, '/$1//').replace(/^\/([\w.]+)$/, '//$1')],
  ];
  it.each(paths.map((p) => [p.template, p] as const))('%s: other spellings of the path are 404', async (_, p) => {
    const method = p.methods.has('GET') ? 'GET' : [...p.methods][0];
    for (const [how, path] of variants(concrete(p.template))) {
      if (path === concrete(p.template)) continue;
      const withBody = method !== 'GET' && method !== 'HEAD';
      const req: SentRequest = { method, path, headers: withBody ? { 'Content-Type': 'application/json' } : {}, body: withBody ? '{}' : undefined, intent: `${how} of ${p.template}` };
      const res = await exchange(OPERATIONS[0], req);
      enforceRaw(
        tally,
        RAW_GAPS,
        'path spellings',
        req,
        res,
        [{ ok: res.status === 404, rule: 'path-variant', detail: `${how} of ${p.template} (${path}) must be 404, got ${res.status}` }],
        res.status === 404 ? 'problem' : p.template === '/graphql' ? 'graphql' : 'problem',
      );
    }
  });
});

describe('contract fuzz: coverage', () => {
  it('nothing was found (collect mode lists every kind here)', () => {
    expect(tally.findings.lines()).toEqual([]);
  });

  it('every operation was answered a success at least once', () => {
    const missing = OPERATIONS.filter((op) => ![...(tally.byOperation.get(op.operationId)?.statuses.keys() ?? [])].some((st) => st < 400)).map((op) => op.operationId);
    expect(missing).toEqual([]);
  });
});
