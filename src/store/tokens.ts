import * as crypto from 'node:crypto';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Bearer tokens as split tokens: `ol_<selector>_<verifier>`. The selector (96 random
 * bits) is stored as is and indexed, so finding a token is one lookup; the verifier
 * (256 random bits) is stored only as its SHA-256 and compared in constant time, so
 * neither the database nor response timing reveals anything that would forge a token.
 * Plain SHA-256 suffices (no salt, no slow KDF): the input is random, not a password.
 */
export interface IssuedToken {
  /** Shown to the user once, never stored. */
  token: string;
  selector: string;
  verifierHash: string;
}

const FORMAT = /^ol_([A-Za-z0-9_-]{16})_([A-Za-z0-9_-]{43})$/;

// crypto.hash (Node >= 20.12) is the one-shot form, without a Hash object per call: this runs on
// every authenticated request. package.json allows any Node 20, so older ones take createHash.
export const hashVerifier: (verifier: string) => string =
  typeof crypto.hash === 'function' ? (verifier) => crypto.hash('sha256', verifier, 'hex') : (verifier) => createHash('sha256').update(verifier, 'utf8').digest('hex');

export function issueToken(): IssuedToken {
  const selector = randomBytes(12).toString('base64url');
  const verifier = randomBytes(32).toString('base64url');
  return { token: `ol_${selector}_${verifier}`, selector, verifierHash: hashVerifier(verifier) };
}

/** The parts of a token in our format, or null (then it cannot be valid). */
export function parseToken(token: string): { selector: string; verifier: string } | null {
  const m = FORMAT.exec(token);
  return m ? { selector: m[1], verifier: m[2] } : null;
}

/** Constant-time comparison of a stored verifier hash with the hash of the verifier sent. */
export function verifierMatches(storedHex: string, sentHex: string): boolean {
  const a = Buffer.from(storedHex, 'hex');
  const b = Buffer.from(sentHex, 'hex');
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}
