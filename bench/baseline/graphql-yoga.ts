/**
 * Peer: GraphQL Yoga 5 + graphql-armor (max depth, cost limit) on the shared schema,
 * DataLoaders and data (graphql-peer-data.ts), with Apollo's APQ protocol. Yoga's own
 * APQ plugin (@graphql-yoga/plugin-apq) cannot be installed beside our
 * @graphql-tools/utils 11 (peer range ^10), so the protocol is written here as that
 * plugin does it: an onParams hook with an in-memory map. PORT, HOST, DATA_DIR; GET /health.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { createGraphQLError, createYoga, type Plugin } from 'graphql-yoga';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { ARMOR_MAX_COST, ARMOR_MAX_DEPTH, armorOptions, host, peerData, port } from './graphql-peer-data';

function apq(): Plugin {
  const store = new Map<string, string>();
  return {
    onParams({ params, setParams }) {
      const pq = (params.extensions as { persistedQuery?: { version?: number; sha256Hash?: string } } | undefined)?.persistedQuery;
      if (!pq || pq.version !== 1 || typeof pq.sha256Hash !== 'string') return;
      if (params.query == null) {
        const query = store.get(pq.sha256Hash);
        if (query === undefined) throw createGraphQLError('PersistedQueryNotFound', { extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', http: { status: 200 } } });
        setParams({ ...params, query });
        return;
      }
      if (createHash('sha256').update(params.query, 'utf8').digest('hex') !== pq.sha256Hash) {
        throw createGraphQLError('PersistedQueryMismatch', { extensions: { code: 'PERSISTED_QUERY_HASH_MISMATCH', http: { status: 400 } } });
      }
      store.set(pq.sha256Hash, params.query);
    },
  };
}

async function main() {
  const { store, schema, context } = await peerData('yoga.sqlite');
  const yoga = createYoga({
    schema,
    context,
    logging: false,
    landingPage: false,
    graphiql: false,
    plugins: [apq(), maxDepthPlugin({ n: ARMOR_MAX_DEPTH, ...armorOptions }), costLimitPlugin({ maxCost: ARMOR_MAX_COST, ...armorOptions })],
  });
  const server = createServer((req, res) => void yoga(req, res));
  server.listen(port(), host(), () => process.stdout.write(`listening on http://${host()}:${(server.address() as { port: number }).port}\n`));
  const stop = () => server.close(() => void store.close().then(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
void main();
