/**
 * GraphQL fuzzer: documents generated from contracts/schema.graphql
 * (test/support/fuzz/graphql.ts: selections within and beyond the depth and cost limits,
 * arguments of every type in and out of range, variables of every JSON shape, deep and
 * huge), odd documents (cycles, unknown fragments, mutations, huge ones), and the
 * envelopes around them (POST and GET, persisted-query hashes right and wrong, batches,
 * bodies that are not JSON or not UTF-8, media types). Every answer is judged: never a
 * 5xx; JSON in GraphQL's shape; every error with an `extensions.code` from the service's
 * list (src/graphql/errors.ts, the README's "GraphQL statuses"); a 400 runs nothing
 * (no `data`); and what the fuzzer computed for the document itself (depth, cost,
 * `first`, graphql-js's rules, the variables' types) says whether it must run (200 with
 * `data`) or be refused (400).
 *
 * Seeded and bounded: FUZZ_RUNS=<n> (default 100) runs per property, FUZZ_SEED=<n>;
 * FUZZ_TARGET (test/support/fuzz/target.ts) aims it at another server.
 */
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { enforceRaw, graphqlErrorRules, newTally, type Expectation, type Received, type Rule, type SentRequest } from '../support/fuzz/check';
import { anyJson, LIMITS, ODD_DOCUMENTS, oddDocumentArb, queryArb, type Generated } from '../support/fuzz/graphql';
import { COLLECT, openFuzzTarget, runsOr, seedOr, type FuzzTarget } from '../support/fuzz/target';
import { GRAPHQL_CODES } from '../../src/graphql/errors';

const RUNS = runsOr(100);
const SEED = seedOr(9001);
const CODES = new Set<string>(Object.values(GRAPHQL_CODES));
const sha256 = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');

let s: FuzzTarget;
const tally = newTally(COLLECT);
const started = Date.now();
const ids: string[] = ['u1', 'u2', 'u7', 'u12'];

beforeAll(async () => {
  s = await openFuzzTarget({ demo: true });
  const res = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"items":[{"sku":"g","quantity":2,"unit_price_cents":5}]}' });
  if (res.status !== 201) throw new Error(`setup: create answered ${res.status}`);
  ids.push(String(((await res.json()) as { id: number }).id));
});

afterAll(async () => {
  await s?.close();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const lines = [
    `graphql fuzz (${s?.external ? `external ${s.url}` : s?.store}, seed ${SEED}, ${RUNS} runs per property): ${tally.requests} requests, ${tally.checks} checks, ${seconds} s, ${s?.resends ?? 0} resent after a connection reset`,
    ...[...tally.byOperation.entries()].map(
      ([label, t]) =>
        `  ${label}: ${t.requests} requests, statuses ${[...t.statuses.entries()]
          .sort(([a], [b]) => a - b)
          .map(([st, n]) => `${st}x${n}`)
          .join(' ')}`,
    ),
    ...(tally.findings.size > 0 ? [`FINDINGS (${tally.findings.size} kinds, collect mode):`, ...tally.findings.lines()] : []),
  ];
  console.log(lines.join('\n'));
});

interface Envelope {
  method: 'GET' | 'POST';
  query: string;
  variables?: unknown;
  operationName?: string;
  extensions?: unknown;
}

const METHODS = ['GET', 'POST'] as const;
/** Accept as clients send it: GraphQL-over-HTTP's own type, plain JSON (where graphql-http alone answers errors 200), anything, none. */
const ACCEPTS = ['application/graphql-response+json', 'application/json', '*/*', undefined] as const;

function toRequest(e: Envelope, intent: string, accept: string | undefined = 'application/graphql-response+json'): SentRequest {
  const headers: Record<string, string> = accept === undefined ? {} : { accept };
  if (e.method === 'GET') {
    const q = new URLSearchParams({ query: e.query });
    if (e.variables !== undefined) q.set('variables', JSON.stringify(e.variables));
    if (e.operationName !== undefined) q.set('operationName', e.operationName);
    if (e.extensions !== undefined) q.set('extensions', JSON.stringify(e.extensions));
    return { method: 'GET', path: `/graphql?${q}`, headers, intent };
  }
  const body = JSON.stringify({ query: e.query, variables: e.variables, operationName: e.operationName, extensions: e.extensions });
  return { method: 'POST', path: '/graphql', headers: { ...headers, 'content-type': 'application/json' }, body, intent };
}

async function exchange(req: SentRequest): Promise<Received> {
  const res = await s.fetch(req.path, { method: req.method, headers: req.headers, body: req.bytes ? new Uint8Array(req.bytes) : req.body });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function jsonDepth(v: unknown): number {
  let depth = 0;
  for (let level: unknown[] = [v]; level.length > 0; depth++) level = level.flatMap((x) => (x !== null && typeof x === 'object' ? Object.values(x) : []));
  return depth - 1;
}

type Body = { data?: unknown; errors?: { extensions?: { code?: unknown } }[] };
const bodyOf = (res: Received): Body | undefined => {
  try {
    return JSON.parse(res.text) as Body;
  } catch {
    return undefined;
  }
};

/** The rules every /graphql answer obeys, whatever was sent. */
function always(res: Received): Expectation[] {
  const out: Expectation[] = [];
  const rule: Rule = (ok, name, detail) => out.push({ ok, rule: name, detail: ok ? '' : detail() });
  // A 4xx is judged by enforceRaw's GraphQL shape rules already.
  if (res.status < 400) graphqlErrorRules(res, rule);
  const body = bodyOf(res);
  const codes = (body?.errors ?? []).map((e) => e?.extensions?.code);
  out.push({ ok: codes.every((c) => typeof c === 'string' && CODES.has(c)), rule: 'graphql-code-known', detail: `codes ${JSON.stringify(codes)} not all in ${[...CODES].join(', ')}` });
  if (res.status >= 400) out.push({ ok: body !== undefined && !('data' in body), rule: 'no-data-on-4xx', detail: 'a refused request carries `data`' });
  if (res.status >= 400) out.push({ ok: Array.isArray(body?.errors) && body.errors.length > 0, rule: 'errors-on-4xx', detail: 'a refused request carries no errors' });
  return out;
}

async function send(label: string, req: SentRequest, extra: (res: Received) => Expectation[] = () => []): Promise<Received> {
  const res = await exchange(req);
  enforceRaw(tally, [], label, req, res, [...always(res), ...extra(res)], 'graphql');
  return res;
}

/** What the fuzzer's own computation says the answer must be. */
function expectedOf(g: Generated): { run: true } | { run: false; why: string } {
  if (g.invalid) return { run: false, why: "graphql-js's rules refuse it" };
  if (g.depth > LIMITS.maxDepth) return { run: false, why: `depth ${g.depth} > ${LIMITS.maxDepth}` };
  if (g.cost > LIMITS.maxCost) return { run: false, why: `cost ${g.cost} > ${LIMITS.maxCost}` };
  if (g.badFirst) return { run: false, why: '`first` out of 0..100 or not an Int' };
  if (g.badVariable) return { run: false, why: 'a variable does not fit its type' };
  return { run: true };
}

const params = (i: number, runs = RUNS) => ({ numRuns: runs, seed: SEED + i, endOnFailure: process.env.FUZZ_SHRINK === undefined });

describe('graphql fuzz', () => {
  it('documents from the schema: run when within the limits, 400 when not', async () => {
    await fc.assert(
      fc.asyncProperty(queryArb(ids), fc.constantFrom<'GET' | 'POST'>('POST', 'POST', 'GET'), fc.option(anyJson, { nil: undefined, freq: 4 }), fc.constantFrom(...ACCEPTS), async (g, method, extra, accept) => {
        const variables = extra === undefined ? g.variables : { ...g.variables, unused: extra };
        // An unused variable nested past what the body reader admits (64 levels, http/body.ts) may be refused whole.
        const tooDeep = extra !== undefined && jsonDepth(extra) > 50;
        const env: Envelope = { method, query: g.query, variables: Object.keys(variables).length > 0 ? variables : undefined, operationName: g.query.startsWith('query Q') ? 'Q' : undefined };
        // A GET whose URL would not fit a request line is sent as POST.
        const req = toRequest(method === 'GET' && toRequest(env, '').path.length > 6000 ? { ...env, method: 'POST' } : env, `${method} depth ${g.depth} cost ${g.cost}`, accept);
        const want = expectedOf(g);
        await send('generated documents', req, (res) => {
          const body = bodyOf(res);
          if (want.run && tooDeep) return [{ ok: res.status === 200 || res.status === 400, rule: 'must-run-or-refuse', detail: `got ${res.status}` }];
          if (want.run)
            return [
              {
                ok: res.status === 200 && body !== undefined && 'data' in body && body.data !== null,
                rule: 'must-run',
                detail: `${g.query} with ${JSON.stringify(variables).slice(0, 200)} must run (depth ${g.depth}, cost ${g.cost}), got ${res.status}`,
              },
            ];
          return [{ ok: res.status === 400, rule: 'must-refuse', detail: `${g.query} with ${JSON.stringify(variables).slice(0, 200)} must be refused 400 (${want.why}), got ${res.status}` }];
        });
      }),
      params(0),
    );
  });

  it.each(ODD_DOCUMENTS.flatMap((d) => METHODS.flatMap((method) => ACCEPTS.map((accept) => [`${d.intent}, ${method}, Accept ${accept ?? 'none'}`, d.query, method, accept] as const))))(
    'odd document: %s',
    async (intent, query, method, accept) => {
      await send('odd documents', toRequest({ method, query }, intent, accept));
    },
  );

  it('odd documents of a size: never a 5xx, refusals coded', async () => {
    await fc.assert(
      fc.asyncProperty(oddDocumentArb, fc.constantFrom(...METHODS), fc.constantFrom(...ACCEPTS), async ({ query, intent }, method, accept) => {
        const env: Envelope = { method, query };
        const req = toRequest(method === 'GET' && toRequest(env, '').path.length > 6000 ? { ...env, method: 'POST' } : env, intent, accept);
        await send('odd documents', req);
      }),
      params(100, Math.max(4, Math.ceil(RUNS / 4))),
    );
  });

  it('GET with a mutation: 405 in GraphQL shape, with a code', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('mutation { viewer { id } }', 'mutation M { x }', 'query Q { viewer { id } } mutation M { y }'), async (query) => {
        const q = new URLSearchParams({ query });
        if (query.includes('mutation M { y }')) q.set('operationName', 'M');
        const req: SentRequest = { method: 'GET', path: `/graphql?${q}`, headers: { accept: 'application/json' }, intent: `GET ${query}` };
        await send('GET mutation', req, (res) => [{ ok: res.status === 405 || res.status === 400, rule: 'get-mutation', detail: `a mutation over GET answered ${res.status}` }]);
      }),
      params(200, Math.min(RUNS, 6)),
    );
  });

  it('variables of every shape, deep and huge', async () => {
    // As text: nesting of 5000 and more is written, not built (JSON.stringify itself would overflow the stack).
    const nested = (depth: number, open: string, close: string) => `${open.repeat(depth)}1${close.repeat(depth)}`;
    // `fits`: must run; false: must be refused; 'either' at the body reader's nesting bound (64 levels with the envelope's, http/body.ts).
    const shapes: fc.Arbitrary<{ text: string; fits: boolean | 'either' }> = fc.oneof(
      anyJson.map((v) => ({ text: JSON.stringify(v), fits: false })),
      fc.constantFrom(10, 62, 63, 64, 65, 1000, 5000, 20000).map((d) => ({ text: `{"id":"u1","deep":${nested(d, '[', ']')}}`, fits: d < 60 || (d < 100 ? ('either' as const) : false) })),
      fc.constantFrom(10, 62, 63, 64, 65, 1000, 5000, 20000).map((d) => ({ text: `{"id":"u1","deep":${nested(d, '{"a":', '}')}}`, fits: d < 60 || (d < 100 ? ('either' as const) : false) })),
      fc.constantFrom(5000, 20000).map((d) => ({ text: nested(d, '{"a":', '}'), fits: false })),
      fc.constantFrom(5000).map((d) => ({ text: `{"id":"u1","first":${nested(d, '[', ']')}}`, fits: false })),
      fc.constantFrom('1e400', '-1e400', '9007199254740993', '2147483648', '1.0', '-0').map((n) => ({ text: `{"id":"u1","first":${n}}`, fits: n === '1.0' || n === '-0' })),
      fc.constant({ text: '{"id":"u1","first":1}', fits: true }),
    );
    await fc.assert(
      fc.asyncProperty(shapes, fc.constantFrom<'GET' | 'POST'>('POST', 'GET'), async ({ text, fits }, method) => {
        const query = 'query Q($id: ID!, $first: Int) { user(id: $id) { name friends(first: $first) { id } } }';
        const intent = `variables ${text.slice(0, 60)}${text.length > 60 ? `... (${text.length} chars)` : ''}`;
        const get = `/graphql?${new URLSearchParams({ query, variables: text })}`;
        const req: SentRequest =
          method === 'GET' && get.length < 6000
            ? { method: 'GET', path: get, headers: { accept: 'application/json' }, intent }
            : { method: 'POST', path: '/graphql', headers: { 'content-type': 'application/json' }, body: `{"query":${JSON.stringify(query)},"variables":${text}}`, intent };
        await send('variables', req, (res) => [
          fits === 'either'
            ? { ok: res.status === 200 || res.status === 400, rule: 'must-run-or-refuse', detail: `${intent}: got ${res.status}` }
            : fits
              ? { ok: res.status === 200, rule: 'must-run', detail: `${intent}: got ${res.status}` }
              : { ok: res.status === 400 || (res.status === 413 && text.length > 65536), rule: 'must-refuse', detail: `${intent} must be refused 400 (413 past the body limit), got ${res.status}` },
        ]);
      }),
      params(300),
    );
  });

  it('envelopes: persisted-query hashes, batches, bodies and media types', async () => {
    const text = '{ viewer { id } }';
    type Case = { intent: string; body?: string; bytes?: Buffer; contentType?: string; want: number[] };
    const envelopes: fc.Arbitrary<Case> = fc.oneof(
      fc.constantFrom<Case>(
        { intent: 'APQ hash of the text sent with it', body: JSON.stringify({ query: text, extensions: { persistedQuery: { version: 1, sha256Hash: sha256(text) } } }), want: [200] },
        { intent: 'APQ hash that is not the text', body: JSON.stringify({ query: text, extensions: { persistedQuery: { version: 1, sha256Hash: sha256('x') } } }), want: [400] },
        { intent: 'APQ version 2', body: JSON.stringify({ extensions: { persistedQuery: { version: 2, sha256Hash: sha256(text) } } }), want: [400] },
        { intent: 'APQ hash not hex', body: JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: 'zz' } } }), want: [400] },
        { intent: 'APQ hash a number', body: JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: 7 } } }), want: [400] },
        { intent: 'batch', body: JSON.stringify([{ query: text }, { query: text }]), want: [400] },
        { intent: 'not an object', body: '"{ viewer { id } }"', want: [400] },
        { intent: 'null', body: 'null', want: [400] },
        { intent: 'not JSON', body: '{query: 1}', want: [400] },
        { intent: 'query not a string', body: JSON.stringify({ query: 7 }), want: [400] },
        { intent: 'variables a string', body: JSON.stringify({ query: text, variables: '{}' }), want: [400] },
        { intent: 'extensions an array', body: JSON.stringify({ query: text, extensions: [] }), want: [400] },
        { intent: 'operationName unknown', body: JSON.stringify({ query: text, operationName: 'Nope' }), want: [400] },
        { intent: 'no query', body: '{}', want: [400] },
        { intent: 'nested 5000 deep', body: `${'['.repeat(5000)}${']'.repeat(5000)}`, want: [400] },
        { intent: 'text/plain', body: JSON.stringify({ query: text }), contentType: 'text/plain', want: [415] },
        { intent: 'charset latin1', body: JSON.stringify({ query: text }), contentType: 'application/json; charset=latin1', want: [415] },
        { intent: 'charset quoted, upper case', body: JSON.stringify({ query: text }), contentType: 'Application/JSON; Charset="UTF-8"', want: [200] },
        { intent: 'charset utf8, other parameter', body: JSON.stringify({ query: text }), contentType: 'application/json;foo=bar;charset=utf8', want: [200] },
        { intent: 'parameter without a value', body: JSON.stringify({ query: text }), contentType: 'application/json; charset', want: [415] },
        { intent: 'no media type', body: JSON.stringify({ query: text }), contentType: '', want: [415] },
      ),
      fc
        .string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 })
        .map((h) => ({ intent: 'APQ hash never registered', body: JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: h } } }), want: [200] })),
      fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80]).map((bad) => ({
        intent: `bytes not UTF-8 (${Buffer.from(bad).toString('hex')})`,
        bytes: Buffer.concat([Buffer.from('{"query":"{ viewer { id } }","operationName":"'), Buffer.from(bad), Buffer.from('"}')]),
        want: [400],
      })),
    );
    await fc.assert(
      fc.asyncProperty(envelopes, async (e) => {
        const req: SentRequest = {
          method: 'POST',
          path: '/graphql',
          headers: e.contentType === '' ? {} : { 'content-type': e.contentType ?? 'application/json' },
          body: e.body ?? e.bytes?.toString('latin1'),
          bytes: e.bytes,
          intent: e.intent,
        };
        await send('envelopes', req, (res) => [{ ok: e.want.includes(res.status), rule: 'envelope-status', detail: `${e.intent}: expected ${e.want.join(' or ')}, got ${res.status}` }]);
      }),
      params(400),
    );
  });

  it('nothing was found (collect mode lists every kind here)', () => {
    expect(tally.findings.lines()).toEqual([]);
  });
});
