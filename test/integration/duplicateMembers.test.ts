/**
 * I-JSON (RFC 7493 2.3) on every reader of client JSON besides REST bodies (badInput.test.ts
 * covers those): a GraphQL POST body, GraphQL GET `variables`, and WebSocket frames. A JSON
 * object text that repeats a member name is refused, naming the member, instead of
 * JSON.parse keeping the last value without a word. The duplicate is generated: which
 * member, at which depth, with which values.
 */
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../support/server';
import { createOrder, openWs, WsClient } from '../support/streams';

let s: TestServer;
let orderId: number;
beforeAll(async () => {
  s = await startTestServer();
  orderId = (await createOrder(s)).id;
});
afterAll(() => s.close());

const RUNS = 25;

/** `{"name":first, ...rest, "name":second}`: the object text with `name` written twice. */
function repeated(name: string, first: unknown, second: unknown, rest: Record<string, unknown> = {}): string {
  const inner = Object.entries(rest)
    .filter(([k]) => k !== name)
    .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
  return `{${[`${JSON.stringify(name)}:${JSON.stringify(first)}`, ...inner, `${JSON.stringify(name)}:${JSON.stringify(second)}`].join(',')}}`;
}

const name = fc.string({ minLength: 1, maxLength: 12 });
const value = fc.jsonValue({ maxDepth: 2 });

describe('repeated member names outside REST bodies', () => {
  it('GraphQL POST: a repeated member anywhere in the body is a 400 BAD_REQUEST naming it', async () => {
    await fc.assert(
      fc.asyncProperty(name, value, value, fc.boolean(), async (member, a, b, inVariables) => {
        const variables = inVariables ? repeated(member, a, b) : '{}';
        const body = inVariables ? `{"query":"{ viewer { name } }","variables":${variables}}` : repeated(member, a, b, { query: '{ viewer { name } }' });
        const res = await s.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' }, body });
        expect(res.status).toBe(400);
        const json = (await res.json()) as { errors: { message: string; extensions: { code: string } }[]; data?: unknown };
        expect(json.data).toBeUndefined();
        expect(json.errors[0].extensions.code).toBe('BAD_REQUEST');
        expect(json.errors[0].message).toContain(`repeats the member "${member.length > 100 ? member.slice(0, 100) : member}`);
      }),
      { numRuns: RUNS, seed: 4201 },
    );
  });

  it('GraphQL GET: repeated members in `variables` are a 400 BAD_REQUEST', async () => {
    await fc.assert(
      fc.asyncProperty(name, value, value, async (member, a, b) => {
        const q = new URLSearchParams({ query: '{ viewer { name } }', variables: repeated(member, a, b) });
        const res = await s.fetch(`/graphql?${q.toString()}`, { headers: { accept: 'application/graphql-response+json' } });
        expect(res.status).toBe(400);
        const json = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
        expect(json.errors[0].extensions.code).toBe('BAD_REQUEST');
        expect(json.errors[0].message).toContain('repeats the member');
      }),
      { numRuns: RUNS, seed: 4202 },
    );
  });

  it('WebSocket: a frame repeating a member is a bad_message error, and the connection stays open', async () => {
    const ws = await openWs(s);
    if (!(ws instanceof WsClient)) throw new Error(`upgrade refused: ${ws.status}`);
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('type', 'channel', 'since'), async (member) => {
        const msg = { type: 'subscribe', channel: `order:${orderId}`, since: 0 };
        const first = member === 'channel' ? 'order:999999' : member === 'since' ? 5 : 'unsubscribe';
        ws.send(repeated(member, first, msg[member], msg));
        sent++;
        const errors = await ws.until((m) => m.filter((x) => x.type === 'error').length >= sent);
        const last = errors.filter((x) => x.type === 'error')[sent - 1];
        expect(last).toMatchObject({ type: 'error', code: 'bad_message' });
        expect(String(last.message)).toContain(`repeats the member "${member}"`);
      }),
      { numRuns: 10, seed: 4203 },
    );
    // Still open and serving: a well-formed subscribe is answered.
    ws.send({ type: 'subscribe', channel: `order:${orderId}`, since: 0 });
    await ws.until((m) => m.some((x) => x.type === 'subscribed'));
    expect(ws.messages.filter((x) => x.type === 'subscribed')).toHaveLength(1);
    ws.ws.close();
  });
});
