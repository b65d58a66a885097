import Router from '@koa/router';
import Koa from 'koa';
import fc from 'fast-check';
import { resources } from '../../generated/openapi/routes';
import { unreachableRoutes } from './koaShell';

const TEMPLATES = [...Object.keys(resources), '/graphql', '/api/orders/{orderId}/stream'];
/** A contract template in @koa/router's syntax: `/orders/{orderId}` -> `/orders/:orderId`. */
const koaPath = (template: string) => template.replace(/\{([^}]+)\}/g, ':$1');

describe('unreachableRoutes', () => {
  it('names every route registered on a path the pipeline serves, whatever its method, and none elsewhere (generated)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...TEMPLATES), fc.constantFrom<('get' | 'post' | 'put' | 'delete')[]>('get', 'post', 'put', 'delete'), fc.stringMatching(/^\/[a-z]{1,8}$/), (template, method, own) => {
        const app = new Koa();
        const router = new Router();
        router[method](koaPath(template), (ctx) => (ctx.body = 'mine'));
        fc.pre(!TEMPLATES.includes(own) && !['/orders', '/graphql', '/docs', '/healthz', '/readyz'].includes(own));
        router.get(own, (ctx) => (ctx.body = 'mine'));
        app.use(router.routes());
        expect(unreachableRoutes(app.middleware, TEMPLATES)).toEqual([{ methods: method.toUpperCase(), path: koaPath(template), owner: template }]);
      }),
    );
  });

  it('sees through prefixes, nested routers and wildcards; leaves router middleware and plain middleware alone', () => {
    const app = new Koa();
    app.use(async (_ctx, next) => next());
    const inner = new Router();
    inner.get('/:id', (ctx) => (ctx.body = 'x'));
    const outer = new Router({ prefix: '/v1' });
    outer.use('/orders', inner.routes());
    outer.use(async (_ctx, next) => next());
    const slash = new Router();
    slash.get('/orders/:id/', (ctx) => (ctx.body = 'x')); // the pipeline answers that spelling too (404)
    const wild = new Router();
    wild.all('/{*rest}', (ctx) => (ctx.body = 'x'));
    app.use(outer.routes()).use(slash.routes()).use(wild.routes());
    expect(unreachableRoutes(app.middleware, TEMPLATES)).toEqual([
      { methods: 'GET', path: '/v1/orders/:id', owner: '/v1/orders/{orderId}' },
      { methods: 'GET', path: '/orders/:id/', owner: '/orders/{orderId}' },
      { methods: '*', path: '/{*rest}', owner: TEMPLATES[0] },
    ]);
  });

  it('finds nothing in the README example (examples/extend.ts)', async () => {
    const { extend } = await import('../../examples/extend');
    const app = new Koa();
    extend(app);
    expect(unreachableRoutes(app.middleware, TEMPLATES)).toEqual([]);
  });
});
