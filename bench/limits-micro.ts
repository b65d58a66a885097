/**
 * `npx tsx bench/limits-micro.ts`: the CPU time the REST rate limit (the Koa-free core:
 * bucket take + IETF field values) and the GraphQL cost budget (pricing + take +
 * `extensions.cost` on the response) add per request, measured in process
 * (process.cpuUsage over 200 000 calls): a figure a shared machine's load disturbs far
 * less than req/s. The budget runs on the simple query of bench:graphql with one parsed
 * document, as the document cache hands it back on every request; its serialization is
 * measured as the response with `extensions.cost` minus the same response without.
 * Compare with a request's own CPU time (bench:limits).
 */
import { parse, getOperationAST } from 'graphql';
import { MemoryBuckets } from '../src/limits';
import { rateLimiter } from '../src/http/rateLimit';
import { costBudget } from '../src/graphql/costBudget';
import { createSchema } from '../src/graphql/schema';
import { SIMPLE } from './graphql-peers';

const N = 200_000;

async function cpuPerCall(f: () => unknown): Promise<number> {
  for (let i = 0; i < 20_000; i++) await f();
  const t = process.cpuUsage();
  for (let i = 0; i < N; i++) await f();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / N;
}

async function main() {
  const limiter = rateLimiter({ buckets: new MemoryBuckets(), rps: 1_000_000, burst: 1_000_000 });
  const fields: string[] = [];
  const rate = await cpuPerCall(() => {
    fields.length = 0;
    limiter.pushFields(fields, limiter.spendNow!(1));
  });
  console.log(`rate limit (take + RateLimit fields) µs/request: ${rate.toFixed(2)}`);

  const schema = createSchema();
  const budget = costBudget({ buckets: new MemoryBuckets(), budget: 1_000_000_000, restoreRate: 1_000_000_000 });
  const doc = parse(SIMPLE);
  const op = getOperationAST(doc)!;
  const result = () => ({ data: { user: { name: 'Ada', friends: [{ name: 'Kiri' }, { name: 'Lena' }, { name: 'Brian' }, { name: 'Chen' }] } } });
  const on = await cpuPerCall(async () => {
    const charging = budget.charge(1, schema, doc, op, undefined);
    const charge = charging instanceof Promise ? await charging : charging;
    const r: { data: unknown; extensions?: unknown } = result();
    r.extensions = { cost: charge.cost };
    return JSON.stringify(r);
  });
  const off = await cpuPerCall(() => JSON.stringify(result()));
  console.log(`cost budget (price + take + extensions.cost) µs/request: ${(on - off).toFixed(2)} (${on.toFixed(2)} with the response's JSON, ${off.toFixed(2)} without the budget)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
