/**
 * The per-account REST rate limit over HTTP. Time is a fake clock handed to the buckets,
 * so no test waits or depends on how fast the machine is.
 */
import { MemoryBuckets } from '../../src/limits';
import { startTestServer, type TestServer } from '../support/server';
import { expectContract } from '../support/contract';

describe('REST rate limit (RATE_LIMIT_RPS=2, RATE_LIMIT_BURST=5)', () => {
  let s: TestServer;
  let t = 1_700_000_000_000;
  beforeAll(async () => {
    s = await startTestServer({ RATE_LIMIT_RPS: '2', RATE_LIMIT_BURST: '5' }, { buckets: new MemoryBuckets(() => t) });
  });
  afterAll(() => s.close());

  it('admits a burst with the IETF fields counting down, then 429 problem+json with Retry-After; recovers after it', async () => {
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await s.fetch('/orders');
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toBe('"rest";q=5;w=3');
      seen.push(res.headers.get('ratelimit')!);
    }
    expect(seen).toEqual(['"rest";r=4;t=1', '"rest";r=3;t=1', '"rest";r=2;t=2', '"rest";r=1;t=2', '"rest";r=0;t=3']);
    const refused = await s.fetch('/orders');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('ratelimit')).toBe('"rest";r=0;t=3');
    expect(refused.headers.get('ratelimit-policy')).toBe('"rest";q=5;w=3');
    expect(await expectContract('listOrders', refused)).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    // Another account has its own bucket.
    expect((await s.fetch('/orders', { as: 'bob' })).status).toBe(200);
    // A refused request spent nothing and wrote nothing: a create is refused before it runs.
    const before = (await s.store.listOrders(s.alice.account.id, 0, 100)).orders.length;
    const post = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(post.status).toBe(429);
    expect((await s.store.listOrders(s.alice.account.id, 0, 100)).orders.length).toBe(before);
    t += 1000 * Number(refused.headers.get('retry-after'));
    const again = await s.fetch('/orders');
    expect(again.status).toBe(200);
    expect(again.headers.get('ratelimit')).toBe('"rest";r=1;t=2');
  });

  it('puts the fields on error responses too (a 404 still spends a token)', async () => {
    t += 10_000;
    const res = await s.fetch('/orders/999999');
    expect(res.status).toBe(404);
    expect(res.headers.get('ratelimit')).toBe('"rest";r=4;t=1');
  });

  it('leaves unauthenticated requests and health probes alone', async () => {
    const res = await s.fetch('/healthz', { as: 'anonymous' });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toBeNull();
  });
});

describe('REST rate limit off (the default)', () => {
  it('sends no fields and never refuses', async () => {
    const s = await startTestServer();
    try {
      for (let i = 0; i < 30; i++) {
        const res = await s.fetch('/orders');
        expect(res.status).toBe(200);
        expect(res.headers.get('ratelimit')).toBeNull();
      }
    } finally {
      await s.close();
    }
  });
});
