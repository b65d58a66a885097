/**
 * The GraphQL baseline: a bare graphql-http server (node adapter) on the same schema,
 * resolvers, DataLoaders and demo data as the service, with graphql-js's default rules
 * only: no auth, no APQ, no depth/cost/first rules, no middleware. PORT, HOST, DATA_DIR.
 */
import { createServer } from 'node:http';
import { join } from 'node:path';
import { createHandler } from 'graphql-http/lib/use/http';
import { createSchema } from '../../src/graphql/schema';
import { createLoaders } from '../../src/graphql/loaders';
import { SqliteStore } from '../../src/store';

async function main() {
  const store = new SqliteStore(join(process.env.DATA_DIR ?? '.', 'bare.sqlite'), 'normal');
  await store.migrate();
  await store.seedDemo();
  const account = await store.ensureAccount('demo');
  const handler = createHandler({ schema: createSchema(), context: () => ({ store, account, loaders: createLoaders(store) }) });
  const host = process.env.HOST || '127.0.0.1';
  const server = createServer((req, res) => {
    if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    void handler(req, res);
  });
  server.listen(Number(process.env.PORT ?? 0), host, () => {
    const addr = server.address() as { port: number };
    process.stdout.write(`listening on http://${host}:${addr.port}\n`);
  });
  const stop = () => server.close(() => void store.close().then(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
void main();
