/**
 * A /graphql request's outcome for metrics, read from the response we send: `ok`, or the
 * first error's `extensions.code` when it is one of ours, else `other` (bounded labels).
 * graphql-js puts `errors` before `data`, so a result starting with `{"data"` has no
 * errors and is not scanned; error bodies are small.
 */
import { GRAPHQL_CODES } from './errors';

const KNOWN_CODES = new Set<string>(Object.values(GRAPHQL_CODES));
const FIRST_CODE = /"code":"([A-Z_]{1,64})"/;

export function outcomeOf(status: number, body: unknown): string {
  if (typeof body === 'string' && status === 200 && body.startsWith('{"data"')) return 'ok';
  const code = typeof body === 'string' ? FIRST_CODE.exec(body)?.[1] : undefined;
  return code !== undefined && KNOWN_CODES.has(code) ? code : 'other';
}
