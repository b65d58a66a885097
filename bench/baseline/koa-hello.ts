/** The baseline: a bare Koa app answering a small JSON body on every path. */
import { createServer } from 'node:http';
import Koa from 'koa';

const app = new Koa();
app.use(async (ctx) => {
  ctx.body = { status: 'ok' };
});
const server = createServer(app.callback());
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const addr = server.address() as { port: number };
  process.stdout.write(`listening on http://127.0.0.1:${addr.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
