/**
 * `npx tsx bench/limits-micro.ts`: the CPU time the REST rate limit (bucket take + IETF
 * fields) and the GraphQL cost budget (pricing + take + extensions.cost) add per request,
 * measured in process (process.cpuUsage over 200 000 calls): a figure a shared machine's
 * load disturbs far less than req/s. Compare with a request's own CPU time (bench:limits).
 */
import { parse, getOperationAST, buildSchema } from 'graphql';
import { MemoryBuckets } from '../src/limits';
import { rateLimitHeaders } from '../src/http/rateLimit';
import { costBudget } from '../src/graphql/costBudget';
import { typeDefs } from '../generated/graphql/schema';
const schema = buildSchema(typeDefs);
const N = 200_000;
async function main() {
  const b = new MemoryBuckets();
  const policy = { capacity: 1_000_000, ratePerSec: 1_000_000 };
  for (let i = 0; i < 20000; i++) { const r = await b.take('rest:1', 1, policy); rateLimitHeaders(policy, r); }
  let t = process.cpuUsage();
  for (let i = 0; i < N; i++) { const r = await b.take('rest:1', 1, policy); rateLimitHeaders(policy, r); }
  let d = process.cpuUsage(t);
  console.log('rate limit take+headers µs/call', ((d.user + d.system) / N).toFixed(2));
  const budget = costBudget({ buckets: new MemoryBuckets(), budget: 1_000_000_000, restoreRate: 1_000_000_000 });
  const doc = parse('{ viewer { id name } }');
  const op = getOperationAST(doc)!;
  for (let i = 0; i < 20000; i++) await budget.charge(1, schema, doc, op, {});
  t = process.cpuUsage();
  for (let i = 0; i < N; i++) { const c = await budget.charge(1, schema, doc, op, {}); JSON.stringify({ cost: c.cost }); }
  d = process.cpuUsage(t);
  console.log('cost budget price+take+extension µs/call', ((d.user + d.system) / N).toFixed(2));
}
main();
