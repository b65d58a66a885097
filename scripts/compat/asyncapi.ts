/**
 * AsyncAPI check: contracts/asyncapi.yaml against the released one.
 *
 * - Channels, operations, servers: @asyncapi/diff over the dereferenced documents
 *   (asyncapi-reader.ts); its v3 standard marks a removed channel, message, operation
 *   or changed address, action or content type as breaking.
 * - Message payloads and WebSocket handshake queries: oasdiff over an OpenAPI view
 *   (payloads.ts), because @asyncapi/diff leaves changes inside them unclassified.
 * - What @asyncapi/diff leaves unclassified elsewhere (bindings but the ws query, ...)
 *   is listed as notes for review, not failed: it cannot say which way it breaks.
 */
import { join } from 'node:path';
import { diff, type DiffOutputItem, type OverrideObject } from '@asyncapi/diff';
import { readAsyncApi, readOptional, referencedFiles } from './asyncapi-reader';
import { ContractFiles } from './causes';
import { parse } from 'yaml';
import { checkPayloads, type Direction, type Message } from './payloads';
import { checkAsyncApiSecurity } from './security';
import { checkChannelParameters } from './channelParameters';
import { checkCloseCodes } from './closeCodes';
import { checkServers } from './servers';
import { ASYNCAPI, checkExtensibleEnums } from './extensibleEnums';
import { asRecord, type Finding, type KindResult } from './types';

/**
 * Additions to @asyncapi/diff's v3 standard. In a dereferenced document an operation's
 * `channel` is the channel object itself, so pointing an operation at another channel
 * shows up as an edit of `/operations/<id>/channel/address`, which the standard leaves
 * unclassified.
 */
export const OVERRIDES: OverrideObject = {
  '/operations/*/channel/address': { add: 'breaking', remove: 'breaking', edit: 'breaking' },
  // Security is judged by security.ts, which knows an added alternative loosens and a changed scheme tightens.
  '/operations/*/security': { add: 'non-breaking', remove: 'non-breaking', edit: 'non-breaking' },
  '/operations/*/security/*': { add: 'non-breaking', remove: 'non-breaking', edit: 'non-breaking' },
};

/** `/channels/orders/messages/error` -> `channel orders, message error`. */
export function describePointer(pointer: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
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

/** Pointers inside a payload or a handshake query: judged by oasdiff in payloads.ts, not here. */
const inPayload = (pointer: string) => /\/messages\/[^/]+\/payload(\/|$)|\/bindings\/ws\/query(\/|$)/.test(pointer);
/** An operation's inlined channel, a channel's inlined server: the same change is judged under /channels, /servers. */
const inlinedCopy = (pointer: string) => /^\/operations\/[^/]+\/channel\/|^\/channels\/[^/]+\/servers\/[^/]+\//.test(pointer);

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
  return Object.fromEntries(Object.entries(messages).map(([name, m]) => [name, m.directions.length > 0 ? m : { ...m, directions: other[name]?.directions.length ? other[name].directions : both }]));
}

/** The payload lines a message's new direction brings: it is now sent by clients, or no longer. */
const DIRECTION_RULES = new Set(['request-body-added-required', 'request-body-removed', 'response-success-status-removed', 'response-success-status-added']);

/**
 * An operation's action turned (`receive` <-> `send`) moves its messages to the other
 * direction, and the payload check then reports each message as now sent by clients (or no
 * longer): those lines are that one edit's consequences, so they share its cause and are
 * listed under it rather than as breaking changes of their own.
 */
export function underTurnedActions(structural: Finding[], payloads: Finding[], messages: Record<string, Message>): void {
  for (const turned of structural.filter((f) => /^\/operations\/[^/]+\/action$/.test(f.pointer ?? ''))) {
    const op = (turned.pointer ?? '').split('/')[2].replace(/~1/g, '/').replace(/~0/g, '~');
    const cause = `operation ${op}: ${turned.message}`;
    Object.assign(turned, { cause, contract: 'contracts/asyncapi.yaml' });
    for (const p of payloads) {
      const name = p.location.startsWith('message ') ? p.location.slice('message '.length) : undefined;
      if (name === undefined || !DIRECTION_RULES.has(p.rule ?? '') || !messages[name]?.operations?.includes(op)) continue;
      Object.assign(p, { cause, contract: turned.contract, pointer: turned.pointer });
    }
  }
}

/** Fields that only document: an edit of one is no one's break, and no note. */
const DOC_KEYS = new Set(['title', 'summary', 'description', 'examples', 'externalDocs', 'tags']);
const isDocEdit = (pointer: string) => pointer.split('/').some((p) => DOC_KEYS.has(p));

export async function checkAsyncApi(current: string, released: string, files = new ContractFiles()): Promise<KindResult> {
  const revision = await readAsyncApi(join(current, 'asyncapi.yaml'));
  const scope = `${revision.channels} channels, ${revision.operations} operations, ${Object.keys(revision.messages).length} message payloads`;
  if (unchanged(current, released)) return { kind: 'asyncapi', findings: [], checked: `${scope}; unchanged since the release`, notes: [] };
  const base = await readAsyncApi(join(released, 'asyncapi.yaml'));
  const output = diff(base.document, revision.document, { override: OVERRIDES, outputType: 'json' });
  // `info` (the document's version, title, contact) is about the document, not the wire: @asyncapi/diff
  // calls a new `info.version` breaking, which every release of the contract would then be.
  const breaking = (output.breaking() as DiffOutputItem[]).filter((c) => !inPayload(c.path) && !/^\/info(\/|$)/.test(c.path));
  // A channel's new address also shows under every operation on it (OVERRIDES); keep
  // those lines only for an operation moved to another channel.
  const addressEdits = new Set(breaking.filter((c) => /^\/channels\/[^/]+\/address$/.test(c.path)).map((c) => JSON.stringify([c.before, c.after])));
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
        contract: 'contracts/asyncapi.yaml',
        pointer: c.path,
      };
    });
  // A channel parameter's enum is judged by channelParameters.ts, not left as a note.
  const unclassified = (output.unclassified() as DiffOutputItem[]).filter((c) => !inPayload(c.path) && !inlinedCopy(c.path) && !isDocEdit(c.path) && !/^\/channels\/[^/]+\/parameters\/[^/]+\/enum(\/|$)/.test(c.path));
  const [releasedDoc, currentDoc] = [asRecord(parse(readOptional(join(released, 'asyncapi.yaml')) ?? '')), asRecord(parse(readOptional(join(current, 'asyncapi.yaml')) ?? ''))];
  const payloads = await checkPayloads(
    { messages: withDirections(base.messages, revision.messages), queries: base.queries },
    { messages: withDirections(revision.messages, base.messages), queries: revision.queries },
    { releasedFile: join(released, 'asyncapi.yaml'), contractsDir: current, files },
  );
  underTurnedActions(structural, payloads, { ...base.messages, ...revision.messages });
  return {
    kind: 'asyncapi',
    // Security schemes and requirements, which @asyncapi/diff leaves unclassified: security.ts (and close codes: closeCodes.ts; no note for either).
    // A value dropped from a message's open set (ErrorMessage.code), which oasdiff judges on client messages only: extensibleEnums.ts.
    findings: [
      ...structural,
      ...payloads,
      ...checkChannelParameters(releasedDoc, currentDoc),
      ...checkCloseCodes(releasedDoc, currentDoc),
      ...checkServers(releasedDoc, currentDoc),
      ...checkAsyncApiSecurity(releasedDoc, currentDoc),
      ...checkExtensibleEnums(releasedDoc, currentDoc, (value) => payloads.some((f) => f.rule?.endsWith('x-extensible-enum-value-removed') && f.message.includes(`value \`${value}\``)), ASYNCAPI),
    ],
    checked: scope,
    notes: unclassified
      .filter((c) => !/\/security(\/|$)|^\/components\/securitySchemes\/|^\/channels\/[^/]+\/x-close-codes(\/|$)/.test(c.path))
      .map((c) => `asyncapi: not judged by @asyncapi/diff (review it): ${c.action} ${c.path}`),
  };
}
