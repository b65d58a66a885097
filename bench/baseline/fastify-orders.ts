/**
 * Peer: koa-orders.ts written on Fastify 5 with @fastify/etag (ETag from the payload's
 * hash and its If-None-Match 304), the same bearer lookup, prepared statements and body.
 */
import Fastify from 'fastify';
import fastifyEtag from '@fastify/etag';
import { openPeerStore, representation } from './peer-data';

const store = openPeerStore();
const app = Fastify({ logger: false });

async function main(): Promise<void> {
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
    const account = store.account(req.headers.authorization);
    if (account === undefined) return reply.code(401).send({ error: 'unauthorized' });
    (req as unknown as { account: number }).account = account;
  });
  app.get<{ Params: { id: string } }>('/orders/:id', async (req, reply) => {
    const row = store.get(Number(req.params.id), (req as unknown as { account: number }).account);
    if (!row) return reply.code(404).send();
    reply.header('Cache-Control', 'private, max-age=0, must-revalidate');
    return representation(row);
  });
  app.patch<{ Params: { id: string }; Body: { note?: unknown } }>('/orders/:id', async (req, reply) => {
    const row = store.setNote(Number(req.params.id), (req as unknown as { account: number }).account, req.body?.note);
    if (!row) return reply.code(404).send();
    return representation(row);
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  const port = Number(process.env.PORT ?? 0);
  const host = process.env.HOST || '127.0.0.1';
  await app.listen({ port, host });
  process.stdout.write(`listening on http://${host}:${port}\n`);
}

const stop = () => app.close().then(() => process.exit(0));
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
main().catch((err) => {
  console.error(err);
  process.exit(1);
});
