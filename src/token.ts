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
import { parseArgs } from 'node:util';
import { parseConfig } from './config';
import { openConfiguredStore, exitRefusing } from './startup';
import { issueToken } from './store';

const USAGE = 'usage: npm run token -- --account <name> [--list | --revoke <selector>]   (name: 1-64 of A-Z a-z 0-9 . _ -)\n';

function usage(why?: string): never {
  process.stderr.write(`${why ? `token: ${why}\n` : ''}${USAGE}`);
  process.exit(2);
}

/**
 * The options, strictly (node:util parseArgs): an unknown option or a stray argument is refused
 * with the usage (exit 2) rather than ignored, since `--account x --lst` would otherwise mint a
 * token. The word after `--revoke` is its selector whatever it starts with: a selector is
 * base64url, and one in 64 starts with `-` (parseArgs alone would refuse it as ambiguous).
 */
function options(argv: string[]): { name: string | undefined; list: boolean; revoke: string | undefined } {
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) args.push(argv[i] === '--revoke' && i + 1 < argv.length ? `--revoke=${argv[++i]}` : argv[i]);
  try {
    const { values } = parseArgs({ args, strict: true, allowPositionals: false, options: { account: { type: 'string' }, list: { type: 'boolean' }, revoke: { type: 'string' } } });
    return { name: values.account, list: values.list === true, revoke: values.revoke };
  } catch (err) {
    return usage(err instanceof Error ? err.message : String(err));
  }
}

async function main(): Promise<void> {
  const { name, list, revoke } = options(process.argv.slice(2));
  // The name ends up in logs and terminals: keep it to a safe, printable set.
  if (typeof name !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(name) || name.startsWith('-')) usage();
  if (list && revoke !== undefined) usage('--list and --revoke exclude each other');
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
