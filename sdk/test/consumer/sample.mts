/**
 * A client team's program, as written in a separate project that installed the
 * @orderline/sdk tarball (test/consumer/consumer.test.ts builds that project, type-checks
 * this file with strict client flags and runs it as ESM; the same text with its imports
 * spelled `import x = require(...)` runs as CJS). Every step asserts; the exit code and
 * the JSON summary on stdout are the verdict.
 *
 * Environment: ORDERLINE_URL, ORDERLINE_TOKEN. A forced drop of the streams is asked of
 * the test over stdio: the program prints `DROP` and waits for `DROPPED`.
 */
import * as assert from 'node:assert';
import * as readline from 'node:readline';
import * as sdk from '@orderline/sdk';
import * as graphql from 'graphql';
import WebSocket from 'ws';
import type { TypedDocumentNode } from '@orderline/sdk';

const baseUrl = process.env['ORDERLINE_URL'] ?? 'http://127.0.0.1:3000';
const token = process.env['ORDERLINE_TOKEN'] ?? '';

const lines = readline.createInterface({ input: process.stdin });
const incoming: string[] = [];
let wake: (() => void) | undefined;
lines.on('line', (l) => {
  incoming.push(l);
  wake?.();
});
async function askDrop(): Promise<void> {
  process.stdout.write('DROP\n');
  while (!incoming.includes('DROPPED')) await new Promise<void>((r) => (wake = r));
  incoming.length = 0;
}

/** What graphql-codegen's typed-document-node plugin generates for a client team's own query. */
type UserNameQuery = { user: { id: string; name: string } | null };
type UserNameQueryVariables = { id: string };
const UserNameDocument: TypedDocumentNode<UserNameQuery, UserNameQueryVariables> = graphql.parse('query UserName($id: ID!) { user(id: $id) { id name } }');

async function waitFor(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function main(): Promise<void> {
  const summary: Record<string, unknown> = {};
  // Every request and its status, as the wire saw them.
  const wire: { method: string; url: string; status: number; ifNoneMatch: string | null }[] = [];
  const logged: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    const res = await fetch(req);
    wire.push({ method: req.method, url: req.url, status: res.status, ifNoneMatch: req.headers.get('if-none-match') });
    return res;
  };
  const { api, cache } = sdk.createOrderlineClient({ baseUrl, token, fetch: logged });

  // 1. Read an order twice: the second read is a 304 answered from the cache.
  const created = await api.POST('/v2/orders', { body: { note: 'consumer' } });
  assert.ok(created.data, 'create failed');
  const id = created.data.id;
  const first = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: id } } });
  const second = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: id } } });
  assert.deepStrictEqual(second.data, first.data);
  assert.strictEqual(cache.hits, 1);
  const reads = wire.filter((w) => w.method === 'GET' && w.url.endsWith(`/v2/orders/${id}`));
  assert.deepStrictEqual(
    reads.map((r) => r.status),
    [200, 304],
  );
  summary['read'] = { statuses: reads.map((r) => r.status), cacheHits: cache.hits };

  // 2. If-Match update through a real 412: another writer gets in between our read and our write.
  // The competitor writes with the same ETag after our read, just before our PATCH.
  const raceWire = wire.length;
  let raced = false;
  const racing: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    if (req.method === 'PATCH' && !raced) {
      raced = true;
      const competitor = await fetch(req.url, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json', 'if-match': req.headers.get('if-match') ?? '' },
        body: JSON.stringify({ note: 'theirs' }),
      });
      assert.strictEqual(competitor.status, 200);
    }
    return logged(req);
  };
  const racer = sdk.createOrderlineClient({ baseUrl, token, fetch: racing });
  let reapplied = 0;
  const final = await sdk.updateOrder(racer.api, id, (current) => {
    reapplied++;
    return { note: `${current.note ?? ''}|ours` };
  });
  const patches = wire
    .slice(raceWire)
    .filter((w) => w.method === 'PATCH')
    .map((w) => w.status);
  assert.deepStrictEqual(patches, [412, 200]);
  assert.strictEqual(reapplied, 2);
  assert.strictEqual(final.note, 'theirs|ours');
  summary['update'] = { patchStatuses: patches, changeCalls: reapplied, note: final.note };

  // 2b. One error type: a missing order is an OrderlineError with status, code and request id; an aborted create fails at once.
  try {
    await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: 999_999_999 } } });
    assert.fail('a missing order was found');
  } catch (err) {
    assert.ok(err instanceof sdk.OrderlineError);
    assert.deepStrictEqual([err.status, err.code, typeof err.requestId], [404, 'NOT_FOUND', 'string']);
  }
  const aborted = new AbortController();
  aborted.abort();
  const sentBefore = wire.length;
  const abortError = await api.POST('/v2/orders', { body: {}, signal: aborted.signal }).then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.strictEqual((abortError as Error).name, 'AbortError');
  assert.strictEqual(wire.length, sentBefore, 'an aborted create was sent (or retried)');
  summary['errors'] = { notFound: 404, aborted: (abortError as Error).name };

  // 3. Page through all orders over _links.next.
  for (let i = 0; i < 5; i++) await api.POST('/v2/orders', { body: {} });
  const ids: number[] = [];
  for await (const order of sdk.allOrders(api, { limit: 2 })) ids.push(order.id);
  assert.strictEqual(new Set(ids).size, ids.length, 'an order came twice');
  assert.ok(ids.includes(id) && ids.length >= 6, `paged ${ids.length} orders`);
  summary['pages'] = { orders: ids.length, pages: wire.filter((w) => w.method === 'GET' && /\/v2\/orders\?/.test(w.url)).length };

  // 4. GraphQL: a contract operation by name and a client-defined typed document.
  const gql = sdk.createGraphqlClient({ baseUrl, token, fetch: logged });
  const byName = await gql.query('OrderV2', { id: String(id) });
  assert.strictEqual(byName.order?.id, String(id));
  const own = await gql.execute(UserNameDocument, { id: 'u1' });
  assert.ok(own.user && own.user.id === 'u1' && typeof own.user.name === 'string');
  const again = await gql.execute(UserNameDocument, { id: 'u1' });
  assert.deepStrictEqual(again, own);
  try {
    await gql.execute(graphql.parse('query Deep { user(id: "u1") { friends { friends { friends { friends { name } } } } } }'), {});
    assert.fail('a too deep query ran');
  } catch (err) {
    assert.ok(err instanceof sdk.GraphqlRequestError);
    assert.strictEqual(err.code, 'GRAPHQL_VALIDATION_FAILED');
  }
  summary['graphql'] = { order: byName.order?.status, user: own.user.name, postsSent: wire.filter((w) => w.url.endsWith('/graphql')).length };

  // 5. Stream the order over WebSocket and SSE across a forced drop.
  const seqs: Record<'ws' | 'sse', number[]> = { ws: [], sse: [] };
  const resyncs: Record<'ws' | 'sse', number> = { ws: 0, sse: 0 };
  const head = await api.GET('/v2/orders/{orderId}', { params: { path: { orderId: id } } });
  const since = Number(/-(\d+)-v/.exec(head.response.headers.get('etag') ?? '')?.[1]);
  assert.ok(Number.isInteger(since));
  const streams = (['ws', 'sse'] as const).map((transport) =>
    sdk.streamOrder({
      baseUrl,
      token,
      orderId: id,
      transport,
      since,
      WebSocket, // the ws package as it is: no cast
      backoff: { baseMs: 50, capMs: 500 },
      onEvent: (m) => seqs[transport].push(m.seq),
      onResync: () => resyncs[transport]++,
    }),
  );
  const touch = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = await fetch(`${baseUrl}/v2/orders/${id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json', 'if-match': '*' },
        body: JSON.stringify({ note: `stream ${i}` }),
      });
      assert.strictEqual(r.status, 200);
    }
  };
  await touch(2);
  await waitFor(() => seqs.ws.length >= 2 && seqs.sse.length >= 2, 'the first events');
  await askDrop();
  await touch(3);
  await waitFor(() => seqs.ws.length >= 5 && seqs.sse.length >= 5, 'the events after the drop');
  for (const s of streams) s.close();
  const expected = [1, 2, 3, 4, 5].map((k) => since + k);
  assert.deepStrictEqual(seqs, { ws: expected, sse: expected });
  assert.deepStrictEqual(resyncs, { ws: 0, sse: 0 });
  summary['streams'] = { ws: seqs.ws, sse: seqs.sse };

  lines.close();
  process.stdout.write(`RESULT ${JSON.stringify(summary)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
