/**
 * Media types as RFC 9110 writes them (8.3.1, 5.6.6): `type/subtype` then `;`-separated
 * parameters whose values are tokens or quoted strings. One parser for every header that
 * carries one (Content-Type, each Accept range), so `version="2"`, `VERSION=2` and
 * `v=2` name the same version wherever the service reads them.
 *
 * Written here rather than taken from jshttp's `content-type` or `negotiator` (both in
 * the tree under Koa): `content-type` throws a TypeError on a malformed value, where the
 * service answers 400, 406 or 415 from a value, and parses anew on every call, where the
 * same few values arrive on every request (remembered below); `negotiator` picks among
 * offered types by comparing their parameters as strings, so it cannot read `v=2` as
 * `version=2`, and gives no reason for a refusal.
 */

export interface MediaType {
  /** `type/subtype`, lowercased (both are case-insensitive). */
  readonly type: string;
  /**
   * Parameters by lowercased name (names are case-insensitive, values are not), quoted
   * values unquoted. Read-only: a parse is shared
   * by every request sending the same text (`parseMediaType` remembers them).
   */
  readonly params: ReadonlyMap<string, string>;
}

/** The characters of an HTTP token (RFC 9110 5.6.2: methods, field names, media types, parameter names), as a character class. */
export const TOKEN_CHARS = "[!#$%&'*+.^_`|~0-9A-Za-z-]";
/** An HTTP token (RFC 9110 5.6.2). */
export const TOKEN = new RegExp(`^${TOKEN_CHARS}+$`);
const OWS = /[ \t]/;
/** Not allowed in a quoted string, escaped or not (HTAB is). */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/; // eslint-disable-line no-control-regex -- matching control characters is this pattern's job

/**
 * The media type `value` names, or null when it is not one: a type or subtype that is
 * not a token, a parameter without `=` or with a bad name or value, an unterminated
 * quoted string, a parameter named twice (`charset=utf-8; charset=latin1`: "an error",
 * RFC 6838 4.3; which one was meant is not the server's to guess). Empty parameters (`a/b;`, `a/b; ; c=d`) are allowed, as the grammar
 * allows them.
 */
export function parseMediaType(value: string): MediaType | null {
  const known = parsed.get(value);
  if (known !== undefined) return known;
  const result = parse(value);
  // Clients send a handful of distinct values (`application/json`, a vendor type with its
  // version, their Accept line), each several times per request (routing, body, version):
  // remembered, bounded in count and length so that varied or long values cannot grow it.
  if (value.length <= MEMO_MAX_LENGTH) {
    if (parsed.size >= MEMO_MAX_ENTRIES) parsed.clear();
    parsed.set(value, result);
  }
  return result;
}

const MEMO_MAX_ENTRIES = 256;
const MEMO_MAX_LENGTH = 256;
const parsed = new Map<string, MediaType | null>();

function parse(value: string): MediaType | null {
  let i = value.indexOf(';');
  if (i === -1) i = value.length;
  const type = value.slice(0, i).trim().toLowerCase();
  const slash = type.indexOf('/');
  if (slash === -1 || !TOKEN.test(type.slice(0, slash)) || !TOKEN.test(type.slice(slash + 1))) return null;
  const params = new Map<string, string>();
  while (i < value.length) {
    i++; // past ';'
    while (i < value.length && OWS.test(value[i])) i++;
    if (i === value.length) break;
    if (value[i] === ';') continue;
    const eq = value.indexOf('=', i);
    if (eq === -1) return null;
    const name = value.slice(i, eq).toLowerCase();
    if (!TOKEN.test(name)) return null;
    i = eq + 1;
    let v: string;
    if (value[i] === '"') {
      v = '';
      for (i++; ; i++) {
        if (i >= value.length) return null; // unterminated
        const c = value[i];
        if (c === '"') break;
        if (c === '\\') {
          i++;
          if (i >= value.length || CONTROL.test(value[i])) return null;
          v += value[i];
        } else if (CONTROL.test(c)) {
          return null;
        } else {
          v += c;
        }
      }
      i++; // past the closing quote
    } else {
      const end = value.indexOf(';', i);
      const stop = end === -1 ? value.length : end;
      v = value.slice(i, stop).replace(/[ \t]+$/, '');
      if (!TOKEN.test(v)) return null;
      i = stop;
    }
    while (i < value.length && OWS.test(value[i])) i++;
    if (i < value.length && value[i] !== ';') return null; // text after a quoted value
    if (params.has(name)) return null;
    params.set(name, v);
  }
  return { type, params };
}

/**
 * The `version` parameter of a media type (text or already parsed), else its synonym
 * `v`; undefined when it has neither or is not a media type.
 */
export function versionOf(value: string | MediaType | null | undefined): string | undefined {
  const params = (typeof value === 'string' ? parseMediaType(value) : value)?.params;
  return params?.get('version') ?? params?.get('v');
}

/**
 * Whether a JSON body's media type lets it be read as UTF-8: no `charset`, or a UTF-8 one.
 * JSON between systems is UTF-8 (RFC 8259 8.1); a body declared in another charset
 * (`charset=iso-8859-1`, `utf-16`) would be misread, so it is refused with 415.
 */
export function readsAsUtf8(value: string | MediaType | null | undefined): boolean {
  const media = typeof value === 'string' ? parseMediaType(value) : value;
  const charset = media?.params.get('charset');
  return charset === undefined || /^utf-?8$/i.test(charset);
}

/**
 * The elements of a comma-separated header list (RFC 9110 5.6.1), split at commas
 * outside quoted strings: `a/b; p="x,y", c/d` is two elements.
 */
export function splitList(value: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (c === ',' && !quoted) {
      parts.push(value.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(value.slice(start));
  return parts;
}
