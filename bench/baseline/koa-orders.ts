/**
 * Peer: the order resource hand-written on Koa, the way the ecosystem's docs show it:
 * @koa/router, koa-conditional-get + koa-etag (304 from the body's hash), a bearer
 * lookup with an in-memory cache, one prepared better-sqlite3 SELECT (PATCH: one
 * UPDATE), a JSON body with `_links`. No contract, no validation, no versions.
 */
import { createServer } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import conditional from 'koa-conditional-get';
import etag from 'koa-etag';
import getRawBody from 'raw-body';
import { listen, openPeerStore, representation } from './peer-data';

const store = openPeerStore();
const app = new Koa();
const router = new Router();

router.use(async (ctx, next) => {
  if (ctx.path === '/healthz') return next() as Promise<void>;
  const account = store.account(ctx.get('authorization'));
  if (account === undefined) {
    ctx.status = 401;
    ctx.body = { error: 'unauthorized' };
    return;
  }
  ctx.state.peerAccount = account;
  await next();
});
router.get('/orders/:id', (ctx) => {
  const row = store.get(Number(ctx.params.id), ctx.state.peerAccount as number);
  if (!row) {
    ctx.status = 404;
    return;
  }
  ctx.set('Cache-Control', 'private, max-age=0, must-revalidate');
  ctx.body = representation(row);
});
router.patch('/orders/:id', async (ctx) => {
  const body = JSON.parse(await getRawBody(ctx.req, { encoding: 'utf8', limit: '64kb' })) as { note?: unknown };
  const row = store.setNote(Number(ctx.params.id), ctx.state.peerAccount as number, body.note);
  if (!row) {
    ctx.status = 404;
    return;
  }
  ctx.body = representation(row);
});
router.get('/healthz', (ctx) => {
  ctx.body = { status: 'ok' };
});

app.use(conditional());
app.use(etag());
app.use(router.routes());
app.use(router.allowedMethods());

const callback = app.callback();
const server = createServer((req, res) => void callback(req, res));
listen(server, Number(process.env.PORT ?? 0), process.env.HOST || '127.0.0.1');
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
