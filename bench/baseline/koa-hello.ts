/** The baseline: a bare Koa 3 app answering a small JSON body on every path (PORT, HOST). */
import { createServer } from 'node:http';
import Koa from 'koa';

const app = new Koa();
app.use(async (ctx) => {
  ctx.body = { status: 'ok' };
});
const host = process.env.HOST || '127.0.0.1';
const callback = app.callback();
const server = createServer((req, res) => void callback(req, res));
server.listen(Number(process.env.PORT ?? 0), host, () => {
  const addr = server.address() as { port: number };
  process.stdout.write(`listening on http://${host}:${addr.port}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
