import { createHash, randomBytes } from 'node:crypto';

/** A new bearer token: 256 random bits, base64url, prefixed so leaked tokens are recognisable. */
export function generateToken(): string {
  return `ol_${randomBytes(32).toString('base64url')}`;
}

/**
 * What is stored instead of the token. Plain SHA-256 suffices (no salt, no slow KDF)
 * because the input is 256 random bits, not a guessable password.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
