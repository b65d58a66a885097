import Router from '@koa/router';
import type Koa from 'koa';

/** Your own middleware and routes, for paths the contracts do not declare. */
export function extend(app: Koa): void {
  app.use(async function poweredBy(ctx, next) {
    await next();
    ctx.set('X-Powered-By', 'orderline');
  });
  const router = new Router();
  router.get('/hello/:name', (ctx) => {
    ctx.body = { hello: ctx.params.name, requestId: ctx.state.requestId as string };
  });
  app.use(router.routes()).use(router.allowedMethods());
}
