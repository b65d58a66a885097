/**
 * Peer: Mercurius 16 on Fastify 5 with `jit: 1` (a document is compiled by graphql-jit
 * on its second run, Mercurius' fastest configuration) + graphql-armor's max-depth and
 * cost-limit rules as `validationRules` (Mercurius has no cost analysis of its own; its
 * `queryDepth` option counts differently from armor, so armor's rule is used as the
 * Yoga and Apollo peers use it, with the same limits), on the shared schema, DataLoaders
 * and data (graphql-peer-data.ts). APQ is Mercurius' built-in Apollo protocol
 * (`persistedQueryDefaults.automatic()`, an in-memory LRU). Everything else is Mercurius'
 * default: its parse/validate LRU (`cache`, 1024 documents; refused documents are kept in
 * a second LRU, so a repeated refusal skips parsing and validation), no logger, no
 * GraphiQL. PORT, HOST, DATA_DIR; GET /health.
 */
import Fastify from 'fastify';
import mercurius from 'mercurius';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { ARMOR_MAX_COST, ARMOR_MAX_DEPTH, armorOptions, host, peerData, port } from './graphql-peer-data';

async function main() {
  const { store, schema, context } = await peerData('mercurius.sqlite');
  const app = Fastify({ logger: false });
  await app.register(mercurius, {
    schema,
    context: () => context(),
    jit: 1,
    graphiql: false,
    persistedQueryProvider: mercurius.persistedQueryDefaults.automatic(),
    validationRules: [maxDepthRule({ n: ARMOR_MAX_DEPTH, ...armorOptions }), costLimitRule({ maxCost: ARMOR_MAX_COST, ...armorOptions })],
  });
  app.get('/health', async () => ({ status: 'ok' }));
  const address = await app.listen({ port: port(), host: host() });
  process.stdout.write(`listening on ${address}\n`);
  const stop = () =>
    void app
      .close()
      .then(() => store.close())
      .then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
void main();
