import { parseConfig, redactUrl } from './config';

describe('configuration', () => {
  it('has defaults for an empty environment', () => {
    const r = parseConfig({});
    expect(r).toMatchObject({ ok: true, config: { port: 3000, host: '127.0.0.1', dataDir: './data', workers: 1 } });
  });
  it.each([
    [{ PORT: 'abc' }, /^PORT must be an integer/],
    [{ PORT: '70000' }, /^PORT must be an integer/],
    [{ WORKERS: '2' }, /^WORKERS=2 needs REDIS_URL/],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL must start with postgres/],
    [{ GRAPHQL_PERSISTED: 'off' }, /^GRAPHQL_PERSISTED must be one of apq, allowlist/],
  ])('refuses %j with one line naming the variable', (env, message) => {
    const r = parseConfig(env as Record<string, string>);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toMatch(message);
      expect(r.error).not.toContain('\n');
    }
  });
  it('never prints a password', () => {
    expect(redactUrl('postgres://u:secret@h:5432/db')).toBe('postgres://u:***@h:5432/db');
    const r = parseConfig({ DATABASE_URL: 'mysql://u:secret@h/db' });
    expect(!r.ok && r.error).not.toContain('secret');
  });
});
