/**
 * A Redis that keeps its connections but answers nothing (SIGSTOP: a hung server, or a
 * partition that drops packets) is an outage like a Redis that refuses them: every request
 * that waits on it (a rate-limit take, a cost-budget charge, an APQ lookup, /readyz's
 * ping) is answered once its command times out, as the README's outage rules say, never
 * held until Redis answers again.
 */
import { createHash } from 'node:crypto';
import { sleep, startInstance, startRedis } from '../support/instances';

jest.setTimeout(90_000);

it('a hung Redis: REST, GraphQL (budget and APQ) and /readyz answer as in an outage, and recover after it', async () => {
  const redis = await startRedis();
  const srv = await startInstance({ REDIS_URL: redis.url, REDIS_PREFIX: 'hung:', RATE_LIMIT_RPS: '100', RATE_LIMIT_BURST: '100', GRAPHQL_COST_BUDGET: '2000' });
  const graphql = (body: unknown) => srv.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' }, body: JSON.stringify(body) });
  try {
    expect((await srv.fetch('/readyz')).status).toBe(200);
    redis.pause();
    // The rate limit admits (the outage is not the client's fault).
    expect((await srv.fetch('/orders?limit=1')).status).toBe(200);
    // Many commands timing out together drop the connection once (no listener leak warned of on stderr).
    expect((await Promise.all(Array.from({ length: 30 }, () => srv.fetch('/orders?limit=1')))).map((r) => r.status)).toEqual(Array(30).fill(200));
    // The cost budget lets the query run; an unknown hash is a miss.
    const query = await graphql({ query: '{ viewer { name } }' });
    expect(query.status).toBe(200);
    expect(await query.json()).toMatchObject({ data: { viewer: { name: expect.any(String) } } });
    const sha256Hash = createHash('sha256').update('{ viewer { id } }').digest('hex');
    const miss = await graphql({ extensions: { persistedQuery: { version: 1, sha256Hash } } });
    expect(((await miss.json()) as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    const ready = await srv.fetch('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ checks: { bus: false } });
  } finally {
    redis.resume();
  }
  try {
    let status = 0;
    for (let i = 0; i < 200 && status !== 200; i++) {
      status = (await srv.fetch('/readyz')).status;
      if (status !== 200) await sleep(50);
    }
    expect(status).toBe(200);
    expect(srv.stderr.join('')).not.toMatch(/MaxListenersExceededWarning/);
  } finally {
    await srv.kill('SIGTERM');
    await redis.kill();
  }
});
