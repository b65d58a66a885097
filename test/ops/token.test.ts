/**
 * `npm run token` on a production install (compiled JavaScript, no devDependency loadable):
 * mints into the store the service reads, DATABASE_SCHEMA included; lists an account's tokens
 * by selector and creation time without ever printing a secret; revokes one.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { PostgresStore, parseToken } from '../../src/store';
import { productionInstall, type ProductionInstall } from '../support/production';

const PG_URL = process.env.DATABASE_TEST_URL || 'postgres://postgres@127.0.0.1:5432/test';
const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };

describe('npm run token', () => {
  let prod: ProductionInstall;
  const schema = `orderline_token_${randomBytes(4).toString('hex')}`;
  const env = { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema };
  const token = (...args: string[]) => prod.run('src/token.js', args, env);

  beforeAll(() => {
    prod = productionInstall();
  });
  afterAll(async () => {
    prod?.remove();
    const admin = new Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });

  it('is the compiled script (and a bin), not a tsx invocation', () => {
    expect(pkg.scripts.token).toBe('node dist/src/token.js');
    expect(pkg.bin['orderline-token']).toBe('dist/src/token.js');
    expect(JSON.stringify(pkg.scripts)).not.toMatch(/tsx[^"]*src\/token|scripts\/token/);
  });

  it('mints into DATABASE_SCHEMA, lists by selector and creation time, and revokes one', async () => {
    const first = token('--account', 'acme');
    expect(first).toMatchObject({ status: 0, stderr: '' });
    const secret1 = first.stdout.trim().split('\n').pop()!;
    const second = token('--account=acme');
    const secret2 = second.stdout.trim().split('\n').pop()!;
    const [p1, p2] = [parseToken(secret1)!, parseToken(secret2)!];
    expect(p1).not.toBeNull();
    expect(p2).not.toBeNull();

    // The tokens are in that schema, where a service with the same environment looks.
    const store = new PostgresStore(PG_URL, { schema });
    try {
      expect((await store.tokenBySelector(p1.selector))!.account.name).toBe('acme');
      const other = new PostgresStore(PG_URL, { schema: `${schema}_other` });
      await other.migrate();
      expect(await other.tokenBySelector(p1.selector)).toBeNull();
      await other.close();
      const admin = new Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}_other" CASCADE`);
      await admin.end();

      const list = token('--account', 'acme', '--list');
      expect(list.status).toBe(0);
      expect(list.stdout).toContain('Tokens of account "acme": 2');
      const lines = list.stdout.trim().split('\n').slice(1);
      expect(lines.map((l) => l.split(/\s+/)[0])).toEqual([p1.selector, p2.selector]);
      for (const l of lines) expect(l).toMatch(/^\S{16} {2}created \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(list.stdout).not.toContain(p1.verifier);
      expect(list.stdout).not.toContain(p2.verifier);

      const revoked = token('--account', 'acme', '--revoke', p1.selector);
      expect(revoked).toMatchObject({ status: 0, stdout: `Revoked token ${p1.selector} of account "acme"\n` });
      expect(await store.tokenBySelector(p1.selector)).toBeNull();
      expect(await store.tokenBySelector(p2.selector)).not.toBeNull();
      expect(token('--account', 'acme', '--list').stdout).not.toContain(p1.selector);

      const again = token('--account', 'acme', '--revoke', p1.selector);
      expect(again.status).toBe(1);
      expect(again.stderr).toContain(`has no token with selector "${p1.selector}"`);
      // Listing or revoking for a name that is no account says so, and creates none.
      for (const args of [['--list'], ['--revoke', p1.selector]]) {
        const none = token('--account', 'nobody', ...args);
        expect(none.status).toBe(1);
        expect(none.stderr).toContain('no account named "nobody"');
      }
      expect(await store.findAccount('nobody')).toBeNull();
    } finally {
      await store.close();
    }
  });

  it('refuses bad usage and bad configuration with one line, exit 2', () => {
    expect(token('--account')).toMatchObject({ status: 2 });
    expect(token('--account', 'acme', '--revoke')).toMatchObject({ status: 2 });
    // A typo or a stray word is refused, not ignored: `--lst` would otherwise mint a token.
    for (const args of [
      ['--account', 'acme', '--lst'],
      ['--account', 'acme', 'list'],
      ['--account', 'acme', '--list', '--revoke', 'x'],
    ]) {
      const r = token(...args);
      expect({ args, status: r.status, stdout: r.stdout }).toEqual({ args, status: 2, stdout: '' });
      expect(r.stderr).toMatch(/usage: /);
    }
    // A selector is base64url and may start with -: the word after --revoke is the selector (none such here: exit 1, not the usage).
    for (const args of [['--revoke', '--AAAAAAAAAAAAAAA'], ['--revoke=-AAAAAAAAAAAAAAA']]) expect(token('--account', 'acme', ...args)).toMatchObject({ status: 1 });
    const bad = prod.run('src/token.js', ['--account', 'acme'], { DATABASE_URL: PG_URL, DATABASE_SCHEMA: 'Bad-Name' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^orderline: DATABASE_SCHEMA/);
  });
});
