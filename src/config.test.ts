import fc from 'fast-check';
import { DEFAULT_REPLAY_MAX_BYTES, parseConfig, redactUrl } from './config';

describe('configuration', () => {
  it('refuses, by name, a variable it reads whose value holds a control character; ignores the ones it does not read (generated)', () => {
    const control = fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(fc.constantFrom('PORT', 'DATABASE_URL', 'DATA_DIR', 'LOG_LEVEL', 'REDIS_PREFIX', 'BODY_LIMIT_BYTES'), control, fc.boolean(), (name, c, atEnd) => {
        const value = atEnd ? `2048${c}` : `20${c}48`;
        expect(parseConfig({ [name]: value })).toEqual({ ok: false, error: `${name} holds a control character (a line break or a tab): give the value alone` });
      }),
    );
    expect(parseConfig({ BASH_FUNC_x: '() {\n echo\n}' }).ok).toBe(true);
  });

  it('has defaults for an empty environment', () => {
    const r = parseConfig({});
    expect(r).toMatchObject({ ok: true, config: { port: 3000, host: '127.0.0.1', listenBacklog: 4096, dataDir: './data', workers: 1 } });
  });
  it.each([
    [{ PORT: 'abc' }, /^PORT must be an integer/],
    [{ PORT: '70000' }, /^PORT must be an integer/],
    [{ LISTEN_BACKLOG: '0' }, /^LISTEN_BACKLOG must be an integer/],
    [{ WORKERS: '2' }, /^WORKERS=2 needs REDIS_URL/],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL must start with postgres/],
    [{ GRAPHQL_PERSISTED: 'off' }, /^GRAPHQL_PERSISTED must be one of apq, allowlist/],
    [{ REDIS_URL: 'http://x' }, /^REDIS_URL must start with redis:\/\/ or rediss:/],
    [{ DATABASE_SCHEMA: 'Bad-Name' }, /^DATABASE_SCHEMA must be a lowercase identifier/],
    [{ DATABASE_SCHEMA: 'pg_foo' }, /^DATABASE_SCHEMA must be a lowercase identifier, not pg_\* or information_schema/],
    [{ DATABASE_SCHEMA: 'information_schema' }, /^DATABASE_SCHEMA must be a lowercase identifier, not pg_\*/],
    [{ REDIS_PREFIX: 'has space' }, /^REDIS_PREFIX must be up to 64/],
    [{ GRAPHQL_COST_BUDGET: '500' }, /^GRAPHQL_COST_BUDGET \(500\) must be 0 \(off\) or at least GRAPHQL_MAX_COST/],
    [{ RATE_LIMIT_RPS: '-1' }, /^RATE_LIMIT_RPS must be an integer/],
    [{ REPLAY_MAX_BYTES: '1000' }, /^REPLAY_MAX_BYTES must be an integer from 65536/],
    [{ DATABASE_SCHEMA: 'prod' }, /^DATABASE_SCHEMA needs DATABASE_URL/],
    [{ REDIS_PREFIX: 'a:' }, /^REDIS_PREFIX needs REDIS_URL/],
    [{ DATABASE_URL: 'postgres://x/y', SQLITE_SYNCHRONOUS: 'full' }, /^SQLITE_SYNCHRONOUS is for the SQLite file/],
    [{ DATABASE_URL: 'postgres://x/y', SQLITE_BUSY_TIMEOUT_MS: '100' }, /^SQLITE_BUSY_TIMEOUT_MS is for the SQLite file/],
    [{ RATE_LIMIT_BURST: '5' }, /^RATE_LIMIT_BURST needs RATE_LIMIT_RPS above 0/],
    [{ DATABASE_QUERY_TIMEOUT_MS: '5000' }, /^DATABASE_QUERY_TIMEOUT_MS needs DATABASE_URL/],
    [{ GRAPHQL_APQ_TTL_S: '100' }, /^GRAPHQL_APQ_TTL_S needs REDIS_URL/],
    [{ GRAPHQL_COST_RESTORE_RATE: '50' }, /^GRAPHQL_COST_RESTORE_RATE needs GRAPHQL_COST_BUDGET above 0/],
    [{ REPLAY_RATE: '100000', REPLAY_WINDOW_S: '86400' }, /^REPLAY_RATE x REPLAY_WINDOW_S \(8640000000\) must be at most 10000000/],
  ])('refuses %j with one line naming the variable', (env, message) => {
    const r = parseConfig(env);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toMatch(message);
      expect(r.error).not.toContain('\n');
    }
  });
  it('loads demo data by default only for the embedded store; DEMO=1 or DEMO=0 decides otherwise', () => {
    const demo = (env: Record<string, string>) => (parseConfig(env) as { ok: true; config: { demo: boolean } }).config.demo;
    expect(demo({})).toBe(true);
    expect(demo({ DATABASE_URL: 'postgres://db/x' })).toBe(false);
    expect(demo({ DATABASE_URL: 'postgres://db/x', DEMO: '1' })).toBe(true);
    expect(demo({ DEMO: '0' })).toBe(false);
    expect(parseConfig({ DEMO: 'yes' })).toEqual({ ok: false, error: expect.stringMatching(/^DEMO must be one of 0, 1/) });
  });
  it('turns the rate limit and the cost budget off by default; the burst defaults to twice the rate', () => {
    expect(parseConfig({})).toMatchObject({ ok: true, config: { rateLimit: { rps: 0 }, graphql: { costBudget: 0, costRestoreRate: 100 }, idempotencyTtlS: 86_400 } });
    expect(parseConfig({ RATE_LIMIT_RPS: '10' })).toMatchObject({ ok: true, config: { rateLimit: { rps: 10, burst: 20 } } });
    expect(parseConfig({ GRAPHQL_COST_BUDGET: '2000' })).toMatchObject({ ok: true, config: { graphql: { costBudget: 2000 } } });
  });
  it('bounds the replay rings in bytes by default (REPLAY_MAX_BYTES)', () => {
    expect(parseConfig({})).toMatchObject({ ok: true, config: { realtime: { replayMaxBytes: DEFAULT_REPLAY_MAX_BYTES } } });
    expect(parseConfig({ REPLAY_MAX_BYTES: '1048576' })).toMatchObject({ ok: true, config: { realtime: { replayMaxBytes: 1048576 } } });
  });
  it('accepts WORKERS>1 with REDIS_URL, and names the Redis namespace', () => {
    const r = parseConfig({ WORKERS: '2', REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(r).toMatchObject({ ok: true, config: { workers: 2, redisPrefix: 'orderline:' } });
  });
  it('serves metrics on a loopback listener of their own by default, with the top 20 accounts labelled', () => {
    expect(parseConfig({})).toMatchObject({ ok: true, config: { metrics: { host: '127.0.0.1', port: 9464, token: undefined, topAccounts: 20, flushIntervalS: 10 } } });
    expect(parseConfig({ METRICS_PORT: '0', PORT: '0' })).toMatchObject({ ok: true, config: { port: 0, metrics: { port: 0 } } });
  });
  it.each([
    [{ METRICS_PORT: '3000' }, /^METRICS_PORT \(3000\) must differ from PORT/],
    [{ METRICS_HOST: '0.0.0.0' }, /^METRICS_HOST=0.0.0.0 needs METRICS_TOKEN/],
    [{ METRICS_HOST: '10.0.0.5' }, /^METRICS_HOST=10.0.0.5 needs METRICS_TOKEN/],
    [{ METRICS_TOKEN: 'short' }, /^METRICS_TOKEN must be 16 to 256 visible ASCII characters/],
    [{ METRICS_TOP_ACCOUNTS: '-1' }, /^METRICS_TOP_ACCOUNTS must be an integer from 0 to 1000/],
    [{ FIELD_READS_FLUSH_S: '0' }, /^FIELD_READS_FLUSH_S must be an integer from 1 to 3600/],
  ])('refuses metrics setting %j with one line naming the variable', (env, message) => {
    const r = parseConfig(env);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(message);
  });
  it('accepts metrics off loopback with a token, and never echoes the token', () => {
    const token = 'a-long-scrape-token-0123456789';
    expect(parseConfig({ METRICS_HOST: '0.0.0.0', METRICS_TOKEN: token })).toMatchObject({ ok: true, config: { metrics: { host: '0.0.0.0', token } } });
    expect(parseConfig({ METRICS_HOST: '::1' })).toMatchObject({ ok: true, config: { metrics: { host: '::1' } } });
    const bad = parseConfig({ METRICS_TOKEN: 'has a space in it, secret' });
    expect(!bad.ok && bad.error).not.toContain('secret');
  });
  it('never prints a password', () => {
    expect(redactUrl('postgres://u:secret@h:5432/db')).toBe('postgres://u:***@h:5432/db');
    const r = parseConfig({ DATABASE_URL: 'mysql://u:secret@h/db' });
    expect(!r.ok && r.error).not.toContain('secret');
  });
  it('never prints a password, however the URL is mistyped: scheme left out, a slash short, in the query (generated)', () => {
    const secret = fc.stringMatching(/^[A-Za-z0-9]{6,16}$/).map((x) => `S3cr${x}`);
    const shapes = [
      (p: string) => `app:${p}@127.0.0.1:5432/db`,
      (p: string) => `postgres:/app:${p}@127.0.0.1:5432/db`,
      (p: string) => `postgres:app:${p}@127.0.0.1:5432/db`,
      (p: string) => `notaurl:${p}@@`,
      (p: string) => `postgres://u@127.0.0.1:1/db?password=${p}`,
      (p: string) => `redis://127.0.0.1:1?password=${p}`,
      (p: string) => `postgres://u:${p}@127.0.0.1:1/db#${p}`,
      (p: string) => `${p}`,
      (p: string) => `postgres://u@127.0.0.1:1/db;password=${p}`,
    ];
    fc.assert(
      fc.property(secret, fc.constantFrom(...shapes), fc.constantFrom('DATABASE_URL', 'REDIS_URL'), (p, shape, name) => {
        const raw = shape(p);
        expect(redactUrl(raw)).not.toContain(p);
        const r = parseConfig({ [name]: raw });
        if (!r.ok) expect(r.error).not.toContain(p);
      }),
    );
    // A slash short is refused by name, as a wrong scheme is.
    expect(parseConfig({ DATABASE_URL: 'postgres:/u:x@h/db' })).toMatchObject({ ok: false, error: expect.stringMatching(/^DATABASE_URL must start with postgres:\/\//) });
    // libpq's socket form has the authority with an empty host: taken, and shown without its query.
    expect(parseConfig({ DATABASE_URL: 'postgres:///db?host=/run/postgresql' })).toMatchObject({ ok: true });
    expect(redactUrl('postgres:///db?host=/run/postgresql&password=x')).toBe('postgres:///db?<not shown>');
    expect(redactUrl('redis://:pw@127.0.0.1:6379')).toBe('redis://:***@127.0.0.1:6379');
  });
});
