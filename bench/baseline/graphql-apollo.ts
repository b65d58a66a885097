/**
 * Peer: Apollo Server 5 (startStandaloneServer: node:http, cors, body-parser) +
 * graphql-armor's max-depth and cost-limit rules as validation rules, on the shared
 * schema, DataLoaders and data (graphql-peer-data.ts). APQ is Apollo's built-in default
 * (in-memory cache). CSRF prevention is off only so the harness's plain GET readiness
 * probe (`?query={__typename}`) is answered; the benchmark's requests are JSON POSTs,
 * which that check lets through anyway. PORT, HOST, DATA_DIR.
 */
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { ARMOR_MAX_COST, ARMOR_MAX_DEPTH, armorOptions, host, peerData, port } from './graphql-peer-data';

async function main() {
  const { store, schema, context } = await peerData('apollo.sqlite');
  const server = new ApolloServer({
    schema,
    csrfPrevention: false,
    validationRules: [maxDepthRule({ n: ARMOR_MAX_DEPTH, ...armorOptions }), costLimitRule({ maxCost: ARMOR_MAX_COST, ...armorOptions })],
  });
  const { url } = await startStandaloneServer(server, { listen: { port: port(), host: host() }, context: async () => context() });
  process.stdout.write(`listening on ${url}\n`);
  const stop = () =>
    void server
      .stop()
      .then(() => store.close())
      .then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
void main();
