/**
 * AsyncAPI check: contracts/asyncapi.yaml against the released one.
 *
 * - Channels, operations, servers: @asyncapi/diff over the dereferenced documents; its
 *   v3 standard marks a removed channel, message, operation or changed address,
 *   action or content type as breaking.
 * - Message payloads: oasdiff over an OpenAPI view of the messages (payloads.ts),
 *   because @asyncapi/diff leaves changes inside a payload unclassified.
 *
 * Each document is read with @asyncapi/parser, which also resolves the payload's
 * `./openapi.yaml#/...` against the file's own folder: the released document reads the
 * released OrderV2. The parser runs without its Spectral ruleset: validity is
 * codegen's gate (`readMessages` refuses an invalid document), and the full ruleset
 * costs about a second per document where resolving costs ~30 ms.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Parser, fromFile } from '@asyncapi/parser';
import { diff, type DiffOutputItem, type OverrideObject } from '@asyncapi/diff';
import { checkPayloads, type Direction, type Message } from './payloads';
import { GateError, type Finding, type KindResult } from './types';

export interface AsyncApiContract {
  /** The dereferenced document, parser bookkeeping removed, shaped for @asyncapi/diff (see `forDiff`). */
  document: Record<string, unknown>;
  /** Every message by name with its payload and who sends it. */
  messages: Record<string, Message>;
  channels: number;
  operations: number;
}

/**
 * Additions to @asyncapi/diff's v3 standard. In a dereferenced document an operation's
 * `channel` is the channel object itself, so pointing an operation at another channel
 * shows up as an edit of `/operations/<id>/channel/address`, which the standard leaves
 * unclassified.
 */
export const OVERRIDES: OverrideObject = {
  '/operations/*/channel/address': { add: 'breaking', remove: 'breaking', edit: 'breaking' },
};

let parser: Parser | undefined;

/**
 * Drops the parser's bookkeeping (`x-parser-*`, `$id`), as codegen/asyncapi.ts's `clean`
 * does; not imported from there because that module loads openapi-typescript, whose
 * ESM-only dependencies jest (CommonJS) cannot load.
 */
export function clean(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clean);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => !k.startsWith('x-parser-') && k !== '$id').map(([k, v]) => [k, clean(v)]));
  }
  return value;
}

/**
 * Parses by content: a long-lived caller (the mutation corpus) reads the same released
 * documents over and over, and a parse costs 100-300 ms. The key is the document's text
 * and the text of every file it references, which is all a parse depends on.
 */
const byContent = new Map<string, Promise<AsyncApiContract>>();
const CACHE_SIZE = 8;

/** Reads and dereferences one AsyncAPI file. */
export function readAsyncApi(file: string): Promise<AsyncApiContract> {
  const text = readFileSync(file, 'utf8');
  const key = [text, ...referencedFiles(text).map((f) => readOptional(join(dirname(file), f)) ?? '')].join('\u0000');
  let result = byContent.get(key);
  if (!result) {
    result = parseAsyncApi(file);
    byContent.set(key, result);
    result.catch(() => byContent.delete(key));
    if (byContent.size > CACHE_SIZE) byContent.delete(byContent.keys().next().value as string);
  }
  return result;
}

async function parseAsyncApi(file: string): Promise<AsyncApiContract> {
  // No URI cache: a long-lived process (the test corpus) rereads files that changed.
  parser ??= new Parser({ ruleset: { core: false, recommended: false }, __unstable: { resolver: { cache: false } } });
  let parsed;
  try {
    parsed = await fromFile(parser, file).parse();
  } catch (err) {
    throw new GateError(`asyncapi: cannot read ${file}: ${(err as Error).message}`);
  }
  const { document, diagnostics } = parsed;
  if (!document) {
    throw new GateError(`asyncapi: ${file} cannot be read:\n${diagnostics.map((d) => `  ${d.path.join('.')}: ${d.message}`).join('\n')}`);
  }
  // A message in a `send` operation is one the client sends (the document is written
  // from the client's side: codegen/asyncapi.ts's CLIENT_MESSAGES are exactly those).
  const directions = new Map<string, Set<Direction>>();
  for (const op of document.operations().all()) {
    for (const m of op.messages().all()) {
      const name = m.name() ?? m.id();
      const set = directions.get(name) ?? new Set<Direction>();
      set.add(op.isSend() ? 'client-to-server' : 'server-to-client');
      directions.set(name, set);
    }
  }
  // The messages clients can see are the channels' ones; a message left only in
  // components is gone from the API. One on a channel that no operation names has no
  // known direction: `withDirections` settles it.
  const messages: Record<string, Message> = {};
  for (const channel of document.channels().all()) {
    for (const m of channel.messages().all()) {
      const name = m.name() ?? m.id();
      const dirs = directions.get(name);
      messages[name] = { payload: clean(m.payload()?.json() ?? {}) as object, directions: dirs ? [...dirs].sort() : [] };
    }
  }
  return {
    document: forDiff(clean(document.json()) as Record<string, unknown>),
    messages,
    channels: document.channels().length,
    operations: document.operations().length,
  };
}

/**
 * Shapes a dereferenced document for @asyncapi/diff, which compares JSON by pointer:
 * - an operation's `messages` list becomes a map by message name, or removing the
 *   second of five messages reads as edits of messages 2-4 and a removal of the fifth;
 * - `components` is dropped: everything a client uses is inlined into channels and
 *   operations, and an unused component breaks nobody.
 */
export function forDiff(doc: Record<string, unknown>): Record<string, unknown> {
  const byName = (list: unknown) =>
    Array.isArray(list) ? Object.fromEntries(list.map((m, i) => [(m as { name?: string }).name ?? String(i), m])) : list;
  const operations = Object.fromEntries(
    Object.entries((doc.operations ?? {}) as Record<string, Record<string, unknown>>).map(([id, op]) => {
      const reply = op.reply as Record<string, unknown> | undefined;
      return [id, { ...op, messages: byName(op.messages), ...(reply ? { reply: { ...reply, messages: byName(reply.messages) } } : {}) }];
    }),
  );
  const { components: _unused, ...rest } = doc;
  return { ...rest, operations };
}

/** `/channels/orders/messages/error` -> `channel orders, message error`. */
export function describePointer(pointer: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const named: Record<string, string> = { channels: 'channel', operations: 'operation', messages: 'message', servers: 'server', parameters: 'parameter' };
  const out: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const label = named[parts[i]];
    if (label && i + 1 < parts.length) {
      out.push(`${label} ${parts[i + 1]}`);
      i++;
    } else out.push(parts[i]);
  }
  return out.join(', ') || 'document';
}

const show = (v: unknown) => (typeof v === 'object' && v !== null ? (Array.isArray(v) ? 'a list' : 'an object') : JSON.stringify(v));

function describeChange(change: DiffOutputItem): string {
  const what = describePointer(change.path).split(', ').pop() ?? '';
  if (change.action === 'remove') return `removed ${what}`;
  if (change.action === 'add') return `added ${what} (${show(change.after)})`;
  return `changed ${what} from ${show(change.before)} to ${show(change.after)}`;
}

/** Pointers inside a payload: judged by oasdiff in payloads.ts, not here. */
const inPayload = (pointer: string) => /\/messages\/[^/]+\/payload(\/|$)/.test(pointer);
/** An operation's inlined channel: the same change is judged under /channels. */
const inOperationChannel = (pointer: string) => /^\/operations\/[^/]+\/channel\//.test(pointer);

/**
 * The files a document's relative `$ref`s point into (`./openapi.yaml#/...`), so an
 * unchanged document over a changed OrderV2 still gets compared.
 */
export function referencedFiles(text: string): string[] {
  return [...new Set([...text.matchAll(/\$ref:\s*["']?\.\/([^#"'\s]+)/g)].map((m) => m[1]))].sort();
}

const readOptional = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : undefined);

/** True when asyncapi.yaml and every file it references are byte-identical on both sides. */
function unchanged(current: string, released: string): boolean {
  const text = readOptional(join(current, 'asyncapi.yaml'));
  if (text === undefined || text !== readOptional(join(released, 'asyncapi.yaml'))) return false;
  return referencedFiles(text).every((f) => readOptional(join(current, f)) === readOptional(join(released, f)));
}

/**
 * A message no operation names takes its direction from the other side of the
 * comparison (its operation was removed: that removal is reported already, and its
 * payload is still judged as what it was), else both directions, the stricter reading.
 */
export function withDirections(messages: Record<string, Message>, other: Record<string, Message>): Record<string, Message> {
  const both: Direction[] = ['client-to-server', 'server-to-client'];
  return Object.fromEntries(
    Object.entries(messages).map(([name, m]) => [
      name,
      m.directions.length > 0 ? m : { ...m, directions: other[name]?.directions.length ? other[name].directions : both },
    ]),
  );
}

/** Fields that only document: an edit of one is no one's break, and no note. */
const DOC_KEYS = new Set(['title', 'summary', 'description', 'examples', 'externalDocs', 'tags']);
const isDocEdit = (pointer: string) => pointer.split('/').some((p) => DOC_KEYS.has(p));

export async function checkAsyncApi(current: string, released: string): Promise<KindResult> {
  const revision = await readAsyncApi(join(current, 'asyncapi.yaml'));
  const scope = `${revision.channels} channels, ${revision.operations} operations, ${Object.keys(revision.messages).length} message payloads`;
  if (unchanged(current, released)) return { kind: 'asyncapi', findings: [], checked: `${scope}; unchanged since the release`, notes: [] };
  const base = await readAsyncApi(join(released, 'asyncapi.yaml'));
  const output = diff(base.document, revision.document, { override: OVERRIDES, outputType: 'json' });
  const breaking = (output.breaking() as DiffOutputItem[]).filter((c) => !inPayload(c.path));
  // A channel's new address also shows under every operation on it (OVERRIDES); keep
  // those lines only for an operation moved to another channel.
  const addressEdits = new Set(
    breaking.filter((c) => /^\/channels\/[^/]+\/address$/.test(c.path)).map((c) => JSON.stringify([c.before, c.after])),
  );
  const structural: Finding[] = breaking
    .filter((c) => !(/^\/operations\/[^/]+\/channel\/address$/.test(c.path) && addressEdits.has(JSON.stringify([c.before, c.after]))))
    .map((c) => {
      const where = describePointer(c.path).split(', ');
      return {
        kind: 'asyncapi',
        group: 'channels and operations',
        location: where.length > 1 ? where.slice(0, -1).join(', ') : where[0],
        message: describeChange(c),
        rule: `${c.action} ${c.path}`,
      };
    });
  const unclassified = (output.unclassified() as DiffOutputItem[]).filter(
    (c) => !inPayload(c.path) && !inOperationChannel(c.path) && !isDocEdit(c.path),
  );
  const payloads = await checkPayloads(
    withDirections(base.messages, revision.messages),
    withDirections(revision.messages, base.messages),
  );
  return {
    kind: 'asyncapi',
    findings: [...structural, ...payloads],
    checked: scope,
    notes: unclassified.map((c) => `asyncapi: not judged by @asyncapi/diff (review it): ${c.action} ${c.path}`),
  };
}
