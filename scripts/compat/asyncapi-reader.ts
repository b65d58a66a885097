/**
 * Reads an AsyncAPI document for the gate: @asyncapi/parser resolves every `$ref`,
 * including the payload's `./openapi.yaml#/...`, against the file's own folder, so the
 * released document reads the released OrderV2.
 *
 * The parser runs without its Spectral ruleset: validity is codegen's gate
 * (`readMessages` refuses an invalid document), and the full ruleset costs about a
 * second per document where resolving costs ~30 ms.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Parser, fromFile } from '@asyncapi/parser';
import type { ClientSurface, Direction, Message } from './payloads';
import { GateError } from './types';
import { clean } from '../../codegen/asyncapiClean';

export interface AsyncApiContract {
  /** The dereferenced document, parser bookkeeping removed, shaped for @asyncapi/diff (see `forDiff`). */
  document: Record<string, unknown>;
  /** Every message by name with its payload and who sends it. */
  messages: Record<string, Message>;
  /** Channel name -> its WebSocket handshake query schema (`bindings.ws.query`). */
  queries: ClientSurface['queries'];
  channels: number;
  operations: number;
}

let parser: Parser | undefined;

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
  // from the client's side: codegen/asyncapi.ts reads its client messages the same way).
  const directions = new Map<string, Set<Direction>>();
  const operationsOf = new Map<string, string[]>();
  for (const op of document.operations().all()) {
    for (const m of op.messages().all()) {
      const name = m.name() ?? m.id();
      const set = directions.get(name) ?? new Set<Direction>();
      set.add(op.isSend() ? 'client-to-server' : 'server-to-client');
      directions.set(name, set);
      const id = op.id();
      if (name !== undefined && id !== undefined) operationsOf.set(name, [...(operationsOf.get(name) ?? []), id]);
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
      messages[name] = { payload: clean(m.payload()?.json() ?? {}) as object, directions: dirs ? [...dirs].sort() : [], operations: operationsOf.get(name) ?? [] };
    }
  }
  const queries: ClientSurface['queries'] = {};
  for (const channel of document.channels().all()) {
    const query = channel.bindings().get('ws')?.value()?.query as ClientSurface['queries'][string] | undefined;
    if (query) queries[channel.id()] = clean(query) as ClientSurface['queries'][string];
  }
  return {
    document: forDiff(clean(document.json()) as Record<string, unknown>),
    messages,
    queries,
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
  const byName = (list: unknown) => (Array.isArray(list) ? Object.fromEntries(list.map((m, i) => [(m as { name?: string }).name ?? String(i), m])) : list);
  const operations = Object.fromEntries(
    Object.entries((doc.operations ?? {}) as Record<string, Record<string, unknown>>).map(([id, op]) => {
      const reply = op.reply as Record<string, unknown> | undefined;
      return [id, { ...op, messages: byName(op.messages), ...(reply ? { reply: { ...reply, messages: byName(reply.messages) } } : {}) }];
    }),
  );
  const { components: _unused, ...rest } = doc;
  return { ...rest, operations };
}

/**
 * The files a document's relative `$ref`s point into (`./openapi.yaml#/...`), so an
 * unchanged document over a changed OrderV2 still gets compared.
 */
export function referencedFiles(text: string): string[] {
  return [...new Set([...text.matchAll(/\$ref:\s*["']?\.\/([^#"'\s]+)/g)].map((m) => m[1]))].sort();
}

/** A file's text, or undefined when it does not exist (a reference may point nowhere yet). */
export const readOptional = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : undefined);
