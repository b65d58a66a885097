/**
 * Idempotency keys and rate limits across two server processes sharing one PostgreSQL schema and one Redis:
 * 20 concurrent identical creates with one Idempotency-Key spread over both instances
 * make one order; the REST rate limit is one bucket for both (Redis Lua script). Each test
 * spends its own account's bucket, so neither depends on what the other spent.
 */
import { Client } from 'pg';
import { PG_URL, mintToken, pgSchema, startInstance, startRedis, type Instance } from '../support/instances';

jest.setTimeout(90_000);

let redis: Awaited<ReturnType<typeof startRedis>>;
let db: ReturnType<typeof pgSchema>;
let a: Instance;
let b: Instance;

beforeAll(async () => {
  redis = await startRedis();
  db = pgSchema();
  const env = { DATABASE_URL: PG_URL, DATABASE_SCHEMA: db.schema, REDIS_URL: redis.url, REDIS_PREFIX: 'lim:', RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '12' };
  a = await startInstance(env); // migrates and seeds first
  b = await startInstance(env);
});

afterAll(async () => {
  await Promise.all([a, b].filter(Boolean).map((i) => i.kill('SIGTERM')));
  await redis?.kill();
  await db?.drop();
});

describe('two instances sharing PostgreSQL and Redis', () => {
  it('create exactly one order from 20 concurrent identical requests with one Idempotency-Key over both', async () => {
    // Each instance has its own demo token for the same account; the key is per account.
    const send = (on: Instance) => on.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'two-instances-1' }, body: JSON.stringify({ note: 'across' }) });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => send(i % 2 ? a : b)));
    expect(answers.every((r) => [201, 409, 429].includes(r.status))).toBe(true);
    const created = answers.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.headers.get('location'))).size).toBe(1);
    // Counted in the database itself (an HTTP list could be refused by the rate limit just spent).
    const pg = new Client({ connectionString: PG_URL });
    await pg.connect();
    try {
      const { rows } = await pg.query(`SELECT count(*)::int AS n FROM "${db.schema}".orders WHERE note = 'across'`);
      expect(rows[0].n).toBe(1);
    } finally {
      await pg.end();
    }
  });

  it('spends one rate-limit bucket per account from both instances: never more than burst + rate x elapsed', async () => {
    // An account of its own (its bucket is full whatever the test above spent of the demo
    // account's), with a token per instance: the bucket is the account's, not a token's.
    const store = { dataDir: '', databaseUrl: PG_URL, databaseSchema: db.schema };
    const tokens = [await mintToken(store, 'limits-rate'), await mintToken(store, 'limits-rate')];
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).fetch('/orders?limit=1', { headers: { authorization: `Bearer ${tokens[i % 2]}` } })));
    const elapsedS = (Date.now() - started) / 1000;
    const admitted = answers.filter((r) => r.status === 200).length;
    expect(answers.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    // Redis's clock refills 1 per second; the bound is computed from the time the burst really took.
    expect(admitted).toBeLessThanOrEqual(12 + Math.ceil(elapsedS) + 1);
    expect(admitted).toBeGreaterThanOrEqual(12);
    const refused = answers.find((r) => r.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('ratelimit-policy')).toBe('"rest";q=12;w=12');
  });
});
