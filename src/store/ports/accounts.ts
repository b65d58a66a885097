/**
 * The accounts port: accounts, their API-version pin, and the bearer tokens that act
 * for them. Types only. A token is stored as its selector and the hash of its verifier,
 * never the token itself (src/store/tokens.ts issues and hashes them).
 */

export interface Account {
  id: number;
  name: string;
  /** API version served when a request names none; null = newest. */
  pinnedVersion: number | null;
}

/** What `npm run token -- --list` shows of a token: enough to pick one to revoke, nothing to use it. */
export interface TokenInfo {
  selector: string;
  /** ISO 8601, milliseconds. */
  createdAt: string;
}

export interface Accounts {
  /**
   * The account with that name, created first if needed (pinned to nothing). Idempotent,
   * also under concurrent calls: one name is one account, distinct names distinct ids.
   */
  ensureAccount(name: string): Promise<Account>;
  /** The account with that name, or null: a lookup that creates nothing (the token CLI's list and revoke). */
  findAccount(name: string): Promise<Account | null>;
  /** Stores a token's selector and the hash of its verifier, bound to the account. */
  addToken(accountId: number, selector: string, verifierHash: string): Promise<void>;
  /**
   * The account (pin included) and stored verifier hash of a selector, or null for an
   * unknown or revoked one. One indexed lookup; the caller compares the hash in constant time.
   */
  tokenBySelector(selector: string): Promise<{ account: Account; verifierHash: string } | null>;
  /** The account's tokens, oldest first: selector and creation time only. */
  listTokens(accountId: number): Promise<TokenInfo[]>;
  /** Deletes the account's token with that selector; false when the account has none such (another account's selector included). */
  revokeToken(accountId: number, selector: string): Promise<boolean>;
  /** Pins the account to an API version, or unpins it with null. */
  setPinnedVersion(accountId: number, version: number | null): Promise<void>;
}
