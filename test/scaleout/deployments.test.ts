/**
 * Two deployments (each its own database) given one Redis and the same REDIS_PREFIX: the
 * second is refused at start (exit 2, naming REDIS_PREFIX), instead of delivering the first
 * one's order events to its subscribers and losing its own.
 */
import { startInstance, startRedis } from '../support/instances';

jest.setTimeout(90_000);

it('a second deployment on a REDIS_PREFIX another one holds is refused at start, with one line naming it', async () => {
  const redis = await startRedis();
  const env = { REDIS_URL: redis.url, REDIS_PREFIX: 'shared:' };
  const first = await startInstance(env); // its own SQLite file: a deployment of its own
  try {
    const refused = await startInstance(env).then(
      async (second) => (await second.kill('SIGKILL'), 'started'),
      (err: unknown) => String(err),
    );
    expect(refused).toMatch(/instance exited 2: orderline: REDIS_PREFIX "shared:" is another deployment's/);
    // The first one serves on.
    expect((await first.fetch('/healthz')).status).toBe(200);
  } finally {
    await first.kill('SIGKILL');
    await redis.kill();
  }
});
