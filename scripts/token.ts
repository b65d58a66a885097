/**
 * `npm run token -- --account <name>`: creates the account if needed and prints a new
 * bearer token for it as the LAST line of output, the only time it is ever shown
 * (only its hash is stored).
 */
import { openStore, generateToken, hashToken } from '../src/store';

async function main(): Promise<void> {
  const i = process.argv.indexOf('--account');
  const name = i >= 0 ? process.argv[i + 1] : undefined;
  if (!name || name.startsWith('--') || !/^[A-Za-z0-9._-]{1,64}$/.test(name)) {
    process.stderr.write('usage: npm run token -- --account <name>   (name: 1-64 of A-Z a-z 0-9 . _ -)\n');
    process.exit(2);
  }
  if (process.env.DATABASE_URL) {
    process.stderr.write('token: the PostgreSQL store is not implemented yet; unset DATABASE_URL\n');
    process.exit(2);
  }
  const store = openStore({ dataDir: process.env.DATA_DIR || './data' });
  await store.migrate();
  const account = await store.ensureAccount(name);
  const token = generateToken();
  await store.addToken(account.id, hashToken(token));
  await store.close();
  process.stdout.write(`New bearer token for account "${account.name}" (shown once; only its hash is stored):\n${token}\n`);
}

main().catch((err) => {
  process.stderr.write(`token: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
