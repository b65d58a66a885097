#!/usr/bin/env node
/**
 * `npm run token` (or the `orderline-token` bin): bearer tokens for an account, in the store the
 * service reads: the same environment as the service (DATA_DIR, DATABASE_URL, DATABASE_SCHEMA),
 * checked by the same parseConfig.
 *
 *   --account <name>                     a new token, printed as the LAST line of stdout, alone
 *                                        (scripts take it with `tail -n 1`); the account is
 *                                        created if needed
 *   --account <name> --list              the account's tokens: selector and creation time
 *   --account <name> --revoke <selector> deletes that token (exit 1 if the account has none such)
 *
 * A token is shown once, when made: only its selector and the hash of its verifier are stored
 * (store/tokens.ts), so a listing can name a token but never reveal it. A revoked token stops
 * working at once for a new server process and within AUTH_CACHE_TTL_MS for a running one.
 *
 * It lives in src/ so `npm run build` compiles it into dist/: a production install
 * (`npm ci --omit=dev`, no tsx, no TypeScript) runs `node dist/src/token.js`.
 */
import { parseConfig } from './config';
import { openConfiguredStore, exitRefusing } from './startup';
import { issueToken } from './store';

const USAGE = 'usage: npm run token -- --account <name> [--list | --revoke <selector>]   (name: 1-64 of A-Z a-z 0-9 . _ -)\n';

/** The value of `--flag <value>` or `--flag=<value>`, true for a bare `--flag`, or undefined. */
function option(argv: readonly string[], flag: string): string | true | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === flag) return argv[i + 1] === undefined || argv[i + 1].startsWith('--') ? true : argv[i + 1];
    if (argv[i].startsWith(`${flag}=`)) return argv[i].slice(flag.length + 1);
  }
  return undefined;
}

function usage(): never {
  process.stderr.write(USAGE);
  process.exit(2);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const name = option(argv, '--account');
  const list = option(argv, '--list') === true;
  const revoke = option(argv, '--revoke');
  // The name ends up in logs and terminals: keep it to a safe, printable set.
  if (typeof name !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(name) || name.startsWith('-')) usage();
  if (revoke === true || (list && revoke !== undefined)) usage();
  const parsed = parseConfig(process.env);
  if (!parsed.ok) exitRefusing(parsed.error);
  const store = await openConfiguredStore(parsed.config); // migrated: a fresh store works too
  try {
    // Listing or revoking creates nothing: a name that is no account is said so (exit 1).
    const account = list || typeof revoke === 'string' ? await store.findAccount(name) : await store.ensureAccount(name);
    if (!account) {
      process.stderr.write(`token: no account named "${name}"\n`);
      process.exitCode = 1;
    } else if (list) {
      const tokens = await store.listTokens(account.id);
      process.stdout.write(`Tokens of account "${account.name}": ${tokens.length}\n`);
      for (const t of tokens) process.stdout.write(`${t.selector}  created ${t.createdAt}\n`);
    } else if (typeof revoke === 'string') {
      if (!(await store.revokeToken(account.id, revoke))) {
        process.stderr.write(`token: account "${account.name}" has no token with selector ${JSON.stringify(revoke)}\n`);
        process.exitCode = 1;
      } else {
        process.stdout.write(`Revoked token ${revoke} of account "${account.name}"\n`);
      }
    } else {
      const { token, selector, verifierHash } = issueToken();
      await store.addToken(account.id, selector, verifierHash);
      process.stdout.write(`New bearer token for account "${account.name}", selector ${selector} (shown once; only its hash is stored):\n${token}\n`);
    }
  } finally {
    await store.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`token: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
