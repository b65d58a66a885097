/**
 * The one reader of a request's query string: a REST operation's parameters, a stream's
 * `access_token` (SSE and WebSocket) and `since`, and GraphQL over GET.
 *
 * - Every pair is read, however many (node:querystring stops at 1000 by default: an
 *   `access_token` behind a thousand other pairs went unseen, and the request was 401).
 * - A query that is not percent-encoded UTF-8 (`%FF`) is refused, 400: decoded, it would be
 *   U+FFFD, a value the client did not send (the path is held to the same rule).
 * - A name given once has a string, a repeated one the list of its values, in order: which
 *   parameter may repeat is each reader's rule (REST: the contract's arrays; the others none).
 * - `+` is a space (application/x-www-form-urlencoded, as browsers and URLSearchParams read it).
 */
import { parse } from 'node:querystring';
import { refusal, type Refusal } from './problem';

export type Query = Readonly<Record<string, string | string[] | undefined>>;

/** Whether every percent-encoded sequence of `query` is UTF-8 (RFC 3986 2.1, 2.5). */
function percentEncodedUtf8(query: string): boolean {
  try {
    decodeURIComponent(query);
    return true;
  } catch {
    return false;
  }
}

/** The parameters of `search` (the text after `?`, without it), or a 400. */
export function readQuery(search: string): Query | Refusal {
  if (search === '') return {};
  if (search.includes('%') && !percentEncodedUtf8(search.replace(/\+/g, ' '))) return refusal('BAD_REQUEST', 'The query string is not percent-encoded UTF-8');
  return parse(search, '&', '=', { maxKeys: 0 });
}
