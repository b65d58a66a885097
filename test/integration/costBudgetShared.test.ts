/**
 * The GraphQL cost budget shared in Redis: two app instances, each with its own Redis
 * connection and RedisBuckets on one prefix, spend one bucket per account. A client whose
 * queries spread over both is throttled exactly when the shared bucket would go below
 * zero, which a model of that one bucket predicts query by query. Needs Redis
 * (REDIS_TEST_URL); the fake clock keeps it independent of the machine's speed.
 */
import fc from 'fast-check';
import { startTwoInstances, type TwoInstances } from '../support/twoInstances';

const ENV = { GRAPHQL_COST_BUDGET: '100', GRAPHQL_COST_RESTORE_RATE: '10', GRAPHQL_MAX_COST: '100' };
/** Queries and their exact costs (costRule.ts's formula). */
const QUERIES: [string, number][] = [
  ['{ viewer { id name } }', 4],
  ['{ user(id: "u1") { friends(first: 5) { id } } }', 17],
  ['{ user(id: "u1") { friends { name } } }', 32],
];

interface Body {
  data?: unknown;
  errors?: { extensions?: Record<string, unknown> }[];
  extensions?: { cost?: { requestedQueryCost: number; throttleStatus: { currentlyAvailable: number } } };
}

describe('GraphQL cost budget across two instances sharing Redis', () => {
  let two: TwoInstances;
  let token: string;
  beforeAll(async () => {
    two = await startTwoInstances(ENV);
    await two.a.store.seedDemo();
    token = await two.a.tokenFor('demo');
  });
  afterAll(() => two.close());

  it('throttles exactly when the one shared bucket would go below zero, however queries spread over the instances and time (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ onB: fc.boolean(), wait: fc.nat({ max: 2500 }), which: fc.nat({ max: QUERIES.length - 1 }) }), { minLength: 1, maxLength: 16 }), async (steps) => {
        two.newPrefix();
        let model = 100_000; // milli-points of the one bucket both instances share
        for (const { onB, wait, which } of steps) {
          two.clock.now += wait;
          model = Math.min(100_000, model + wait * 10);
          const [query, cost] = QUERIES[which];
          const res = await fetch(`${onB ? two.bUrl : two.a.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${token}` },
            body: JSON.stringify({ query }),
          });
          const json = (await res.json()) as Body;
          const fits = cost * 1000 <= model;
          expect(res.status).toBe(fits ? 200 : 429);
          if (fits) model -= cost * 1000;
          else expect(json.errors![0].extensions!.code).toBe('THROTTLED');
          expect(json.data === undefined).toBe(!fits);
          expect(json.extensions!.cost).toEqual({ requestedQueryCost: cost, throttleStatus: { maximumAvailable: 100, currentlyAvailable: Math.floor(model / 1000), restoreRate: 10 } });
        }
      }),
      { numRuns: 20 },
    );
  });
});
