/**
 * Peer: the order resource hand-written on Fastify 5, over either peer store (peer-data.ts
 * on SQLite, peer-pg.ts on PostgreSQL): @fastify/etag for the 304 (the handler sets the
 * revision ETag, so the plugin compares instead of hashing), the bearer lookup as an
 * onRequest hook, Fastify's JSON body parser (and one for merge-patch+json), and the
 * per-operation work peer-data.ts describes. fastify-orders.ts and fastify-pg-orders.ts
 * start it.
 */
import Fastify from 'fastify';
import fastifyEtag from '@fastify/etag';
import { createBody, etagOf, listBody, listQuery, representation, type PeerStore } from './peer-data';

const CACHE_CONTROL = 'private, max-age=0, must-revalidate';

export async function serveFastifyPeer(store: PeerStore): Promise<void> {
  const app = Fastify({ logger: false });
  await app.register(fastifyEtag);
  app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.addHook('onRequest', async (req, reply) => {
    if (req.url === '/healthz') return;
    const account = await store.account(req.headers.authorization);
    if (account === undefined) return reply.code(401).send({ error: 'unauthorized' });
    (req as unknown as { account: number }).account = account;
  });
  const accountOf = (req: unknown) => (req as { account: number }).account;

  app.get<{ Querystring: { limit?: string; page?: string } }>('/orders', async (req, reply) => {
    const q = listQuery(req.query);
    if (!q) return reply.code(400).send({ error: 'bad limit or page' });
    const page = await store.list(accountOf(req), q.after, q.limit);
    reply.header('Cache-Control', CACHE_CONTROL);
    return listBody(q, page);
  });
  app.post('/orders', async (req, reply) => {
    const fields = createBody(req.body);
    if (!fields) return reply.code(400).send({ error: 'bad order' });
    const row = await store.create(accountOf(req), fields);
    reply.code(201).header('Location', `/orders/${row.id}`).header('ETag', etagOf(row)).header('Cache-Control', CACHE_CONTROL);
    return representation(row);
  });
  app.get<{ Params: { id: string } }>('/orders/:id', async (req, reply) => {
    const row = await store.get(Number(req.params.id), accountOf(req));
    if (!row) return reply.code(404).send();
    reply.header('ETag', etagOf(row)).header('Cache-Control', CACHE_CONTROL);
    return representation(row);
  });
  app.patch<{ Params: { id: string }; Body: Record<string, unknown> }>('/orders/:id', async (req, reply) => {
    if (typeof req.body !== 'object' || req.body === null) return reply.code(400).send({ error: 'bad patch' });
    const ifMatch = req.headers['if-match'];
    const res = await store.patch(Number(req.params.id), accountOf(req), ifMatch, req.body);
    if (res.status !== 200) return reply.code(res.status).send({ error: res.status === 412 ? 'precondition failed' : res.status === 428 ? 'If-Match required' : 'not found' });
    reply.header('ETag', etagOf(res.row)).header('Cache-Control', CACHE_CONTROL);
    return representation(res.row);
  });
  app.get('/healthz', async () => ({ status: 'ok' }));

  const port = Number(process.env.PORT ?? 0);
  const host = process.env.HOST || '127.0.0.1';
  await app.listen({ port, host });
  process.stdout.write(`listening on http://${host}:${port}\n`);
  const stop = () => void app.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

export function run(start: () => Promise<void>): void {
  start().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
