/**
 * A field error that is not the client's doing (answered INTERNAL_SERVER_ERROR in a partial
 * 200) is logged with the request's id, as REST logs its 500s: the id the client holds finds
 * the cause. The client's own field errors (BAD_USER_INPUT) are not logged as errors.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { createApp } from '../../src/app';
import { startTestServer, type TestServer } from '../support/server';

const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({}, {}, (deps) => createApp({ ...deps, logger: pino({ level: 'error' }, sink) }));
});
afterAll(() => srv.close());

const gql = (query: string, id: string, variables?: Record<string, unknown>) =>
  srv.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': id }, body: JSON.stringify({ query, variables }) });

it('logs an INTERNAL_SERVER_ERROR field error once with the request id and the field path; a client-caused field error is not logged', async () => {
  const created = await srv.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: [{ sku: 'BIG-1', quantity: 1000, unit_price_cents: 99_999_999 }] }) });
  const { id } = (await created.json()) as { id: number };
  const r = await gql(`{ o: order(id: "${id}") { id totalCents } }`, 'field-error-1');
  expect(((await r.json()) as { errors: { extensions: { code: string } }[] }).errors.map((e) => e.extensions.code)).toEqual(['INTERNAL_SERVER_ERROR']);
  const client = await gql('query A($i: Boolean = true, $id: ID = "u2") { viewer { id name @include(if: $i) } user(id: $id) { name } }', 'field-error-2', { i: null, id: null });
  expect(client.status).toBe(200);
  expect(((await client.json()) as { errors: { extensions: { code: string } }[] }).errors.map((e) => e.extensions.code)).toContain('BAD_USER_INPUT');
  await new Promise((r) => setImmediate(r));
  const logged = lines.filter((l) => l.msg === 'graphql field error');
  expect(logged).toEqual([expect.objectContaining({ reqId: 'field-error-1', path: ['o', 'totalCents'], count: 1, level: 50 })]);
});

it('logs a request of many failing fields as one line, with their count and the first few paths, not a line each', async () => {
  const created = await srv.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: [{ sku: 'BIG-2', quantity: 1000, unit_price_cents: 9_000_000 }] }) });
  const { id } = (await created.json()) as { id: number };
  const aliases = Array.from({ length: 180 }, (_, i) => `a${i}: order(id: "${id}") { totalCents }`).join(' ');
  const before = lines.length;
  const r = await gql(`{ ${aliases} }`, 'field-error-many');
  expect(((await r.json()) as { errors: unknown[] }).errors).toHaveLength(180);
  await new Promise((r) => setImmediate(r));
  const logged = lines.slice(before).filter((l) => l.msg === 'graphql field error');
  expect(logged).toEqual([expect.objectContaining({ reqId: 'field-error-many', count: 180, paths: [0, 1, 2, 3, 4].map((i) => [`a${i}`, 'totalCents']) })]);
});
