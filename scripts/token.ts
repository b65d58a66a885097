/**
 * `npm run token -- --account <name>`: creates the account if needed and prints a new
 * bearer token for it as the LAST line of stdout, alone, so scripts can take it with
 * `tail -n 1`. It is shown this once: only its selector and the hash of its verifier
 * are stored (store/tokens.ts).
 *
 * Environment: DATA_DIR (default ./data) and DATABASE_URL, the same as the service, so
 * the token lands in the store the service reads.
 */
import { issueToken, openStore } from '../src/store';

const USAGE = 'usage: npm run token -- --account <name>   (name: 1-64 of A-Z a-z 0-9 . _ -)\n';

/** The value of `--account <name>` or `--account=<name>`, or undefined. */
function accountArg(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--account') return argv[i + 1];
    if (argv[i].startsWith('--account=')) return argv[i].slice('--account='.length);
  }
  return undefined;
}

async function main(): Promise<void> {
  const name = accountArg(process.argv.slice(2));
  // The name ends up in logs and terminals: keep it to a safe, printable set.
  if (!name || !/^[A-Za-z0-9._-]{1,64}$/.test(name) || name.startsWith('-')) {
    process.stderr.write(USAGE);
    process.exit(2);
  }
  const store = await openStore({ dataDir: process.env.DATA_DIR || './data', databaseUrl: process.env.DATABASE_URL || undefined });
  try {
    await store.migrate();
    const account = await store.ensureAccount(name);
    const { token, selector, verifierHash } = issueToken();
    await store.addToken(account.id, selector, verifierHash);
    process.stdout.write(`New bearer token for account "${account.name}" (shown once; only its hash is stored):\n${token}\n`);
  } finally {
    await store.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`token: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
