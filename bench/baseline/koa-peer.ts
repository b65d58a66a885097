/**
 * Peer: the order resource hand-written on Koa, the way the ecosystem's docs show it, over
 * either peer store (peer-data.ts on SQLite, peer-pg.ts on PostgreSQL): @koa/router,
 * koa-conditional-get + koa-etag (the handler sets the revision ETag, so koa-etag leaves
 * it and koa-conditional-get answers the 304), the bearer lookup as router middleware,
 * raw-body + JSON.parse for bodies, and the per-operation work peer-data.ts describes.
 * koa-orders.ts and koa-pg-orders.ts start it.
 */
import { createServer } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import conditional from 'koa-conditional-get';
import etag from 'koa-etag';
import getRawBody from 'raw-body';
import { createBody, etagOf, listBody, listQuery, listen, representation, type PeerStore } from './peer-data';

const CACHE_CONTROL = 'private, max-age=0, must-revalidate';

export function serveKoaPeer(store: PeerStore): void {
  const app = new Koa();
  const router = new Router();
  const json = async (req: Koa.Context['req']): Promise<unknown> => {
    const text: string = await getRawBody(req, { encoding: 'utf8', limit: '64kb' });
    const parsed: unknown = JSON.parse(text);
    return parsed;
  };

  router.use(async (ctx, next) => {
    if (ctx.path === '/healthz') {
      await next();
      return;
    }
    const account = await store.account(ctx.get('authorization'));
    if (account === undefined) {
      ctx.status = 401;
      ctx.body = { error: 'unauthorized' };
      return;
    }
    ctx.state.peerAccount = account;
    await next();
  });
  router.get('/orders', async (ctx) => {
    const q = listQuery(ctx.query);
    if (!q) {
      ctx.status = 400;
      ctx.body = { error: 'bad limit or page' };
      return;
    }
    const page = await store.list(ctx.state.peerAccount as number, q.after, q.limit);
    ctx.set('Cache-Control', CACHE_CONTROL);
    ctx.body = listBody(q, page);
  });
  router.post('/orders', async (ctx) => {
    const fields = createBody(await json(ctx.req));
    if (!fields) {
      ctx.status = 400;
      ctx.body = { error: 'bad order' };
      return;
    }
    const row = await store.create(ctx.state.peerAccount as number, fields);
    ctx.status = 201;
    ctx.set({ Location: `/orders/${row.id}`, ETag: etagOf(row), 'Cache-Control': CACHE_CONTROL });
    ctx.body = representation(row);
  });
  router.get('/orders/:id', async (ctx) => {
    const row = await store.get(Number(ctx.params.id), ctx.state.peerAccount as number);
    if (!row) {
      ctx.status = 404;
      return;
    }
    ctx.set({ ETag: etagOf(row), 'Cache-Control': CACHE_CONTROL });
    ctx.body = representation(row);
  });
  router.patch('/orders/:id', async (ctx) => {
    const body = await json(ctx.req);
    if (typeof body !== 'object' || body === null) {
      ctx.status = 400;
      ctx.body = { error: 'bad patch' };
      return;
    }
    const res = await store.patch(Number(ctx.params.id), ctx.state.peerAccount as number, ctx.get('if-match') || undefined, body as Record<string, unknown>);
    if (res.status !== 200) {
      ctx.status = res.status;
      ctx.body = { error: res.status === 412 ? 'precondition failed' : res.status === 428 ? 'If-Match required' : 'not found' };
      return;
    }
    ctx.set({ ETag: etagOf(res.row), 'Cache-Control': CACHE_CONTROL });
    ctx.body = representation(res.row);
  });
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });

  app.use(conditional());
  app.use(etag());
  app.use(router.routes());
  app.use(router.allowedMethods());

  const handle = app.callback();
  const server = createServer((req, res) => void handle(req, res));
  listen(server, Number(process.env.PORT ?? 0), process.env.HOST || '127.0.0.1');
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
