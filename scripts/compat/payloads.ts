/**
 * AsyncAPI message payloads, checked by oasdiff through an "OpenAPI view" of the
 * messages (the same view codegen/asyncapi.ts builds for
 * types).
 *
 * @asyncapi/diff only judges a payload as a whole: a change inside it is
 * "unclassified". oasdiff knows which schema changes break a reader and which break a
 * writer, so each message becomes one fake operation, `POST /messages/<name>`:
 * - a server-to-client message is the 200 response: a reader, so a removed or
 *   retyped field, a field made optional or a new enum value breaks it;
 * - a client-to-server message is the request body: a writer, so a field made
 *   required, a narrowed type or enum breaks it.
 *
 * A channel's WebSocket handshake query (`bindings.ws.query`, e.g. `since`,
 * `access_token`) is what clients send too, and @asyncapi/diff leaves bindings
 * unclassified; so it joins the view as `GET /channels/<name>` with one query
 * parameter per property, and a removed or newly required parameter fails.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { causeAt, ContractFiles, nodeLabel, propertyPathIn, type NodeRef } from './causes';
import { oasdiffBreaking } from './oasdiff';
import type { Finding } from './types';

/** Who sends a message: the server (client reads it) or the client (server reads it). */
export type Direction = 'server-to-client' | 'client-to-server';

export interface Message {
  payload: object;
  /** Empty when no operation names the message (asyncapi.ts `withDirections` fills it). */
  directions: Direction[];
  /** The ids of the operations that name it. */
  operations?: string[];
}

/** What a realtime client reads and sends: message payloads and handshake queries by channel. */
export interface ClientSurface {
  messages: Record<string, Message>;
  /** Channel name -> its `bindings.ws.query` object schema. */
  queries: Record<string, { properties?: Record<string, object>; required?: string[] }>;
}

export const MESSAGE_PATH_PREFIX = '/messages/';
export const CHANNEL_PATH_PREFIX = '/channels/';

/** An OpenAPI 3.1 document: `POST /messages/<name>` per message, `GET /channels/<name>` per handshake query. */
export function messagesView({ messages, queries }: ClientSurface): object {
  const paths: Record<string, object> = {};
  for (const [name, query] of Object.entries(queries)) {
    paths[`${CHANNEL_PATH_PREFIX}${name}`] = {
      get: {
        operationId: `${name}Handshake`,
        parameters: Object.entries(query.properties ?? {}).map(([param, schema]) => ({
          name: param,
          in: 'query',
          required: (query.required ?? []).includes(param),
          schema,
        })),
        responses: { '200': { description: `${name} handshake` } },
      },
    };
  }
  for (const [name, { payload, directions }] of Object.entries(messages)) {
    const content = { 'application/json': { schema: payload } };
    const toClient = directions.includes('server-to-client');
    paths[`${MESSAGE_PATH_PREFIX}${name}`] = {
      post: {
        operationId: name,
        ...(directions.includes('client-to-server') ? { requestBody: { required: true, content } } : {}),
        responses: toClient ? { '200': { description: `${name}, sent by the server`, content } } : { '204': { description: `${name} is only sent by clients` } },
      },
    };
  }
  return { openapi: '3.1.0', info: { title: 'orderline realtime messages (compat view)', version: '1' }, paths };
}

/** oasdiff's sentence about the fake operation, told about the message instead. */
export function asMessageText(text: string): string {
  return text
    .replace(/ ?(for|from|to|in) the response with the `200` status( \(media type: [^)]*\))?/g, ' $1 the message')
    .replace(/ ?for (the response )?status `200`/g, '')
    .replace(/ response's property/g, ' property')
    .replace(/ response property/g, ' property')
    .replace(/ request property/g, ' property')
    .replace(/ (from|to|in) the request body/g, ' $1 the message');
}

/**
 * Where the released surface was read from, so each finding can name the node it is
 * about: the message payloads are compared dereferenced, the node is found by walking the
 * released document along oasdiff's property path (causes.ts).
 */
export interface PayloadSources {
  /** The released asyncapi.yaml (absolute). */
  releasedFile: string;
  /** The contracts folder under review. */
  contractsDir: string;
  files: ContractFiles;
}

/**
 * A `$ref` on the way to the changed property that now names another schema (a payload's
 * `order` re-pointed from `OrderV2` to `OrderV1`), or a schema of its own: that edit is the
 * cause, not the property of the released target, which did not change. The outermost such `$ref`.
 */
function repointedRef(refs: readonly NodeRef[], sources: PayloadSources): { cause: string; contract: string; pointer: string } | undefined {
  const releasedDir = dirname(sources.releasedFile);
  for (const ref of refs) {
    const edit = sources.files.refEdit(ref, join(sources.contractsDir, relative(releasedDir, ref.file)));
    if (edit === undefined) continue;
    const { contract, pointer } = causeAt(ref, undefined, sources.contractsDir);
    return { cause: `\`${nodeLabel(ref.pointer)}\` ${edit}`, contract, pointer };
  }
  return undefined;
}

/** `node`, or the schema its `$ref` names when the node is unchanged and that schema is not. */
function sharedTargetChanged(node: NodeRef, sources: PayloadSources): NodeRef {
  const releasedDir = dirname(sources.releasedFile);
  const currentOf = (ref: NodeRef) => join(sources.contractsDir, relative(releasedDir, ref.file));
  const target = sources.files.target(node);
  if (target.pointer === node.pointer && target.file === node.file) return node;
  return !sources.files.changed(node, currentOf(node)) && sources.files.changed(target, currentOf(target)) ? target : node;
}

/** The breaking payload and handshake-query changes from `base` to `revision`. */
export async function checkPayloads(base: ClientSurface, revision: ClientSurface, sources?: PayloadSources): Promise<Finding[]> {
  const dir = await mkdtemp(join(tmpdir(), 'orderline-compat-'));
  try {
    const baseFile = join(dir, 'released-messages.json');
    const revisionFile = join(dir, 'current-messages.json');
    await writeFile(baseFile, JSON.stringify(messagesView(base)));
    await writeFile(revisionFile, JSON.stringify(messagesView(revision)));
    const changes = await oasdiffBreaking(baseFile, revisionFile);
    return changes.map((c) => {
      const removed = c.id === 'api-path-removed-without-deprecation' || c.id === 'api-removed-without-deprecation';
      if (c.path?.startsWith(CHANNEL_PATH_PREFIX)) {
        return {
          kind: 'asyncapi',
          group: 'channel handshake queries',
          location: `channel ${c.path.slice(CHANNEL_PATH_PREFIX.length)} (WebSocket handshake query)`,
          message: removed ? 'handshake query removed' : (c.text ?? c.id ?? 'breaking change'),
          rule: c.id,
        };
      }
      const name = c.path?.startsWith(MESSAGE_PATH_PREFIX) ? c.path.slice(MESSAGE_PATH_PREFIX.length) : undefined;
      const property = propertyPathIn(c.text);
      const refs: NodeRef[] = [];
      const walked = sources && name && property ? sources.files.walk({ file: sources.releasedFile, pointer: `/components/messages/${name.replace(/~/g, '~0').replace(/\//g, '~1')}/payload` }, property, refs) : undefined;
      const repointed = sources && repointedRef(refs, sources);
      // A property that refers to a shared schema (`channel: {$ref: Channel}`) and did not change
      // itself: the schema it refers to is what changed, once for every message that uses it.
      const node = walked && sources && sharedTargetChanged(walked, sources);
      return {
        ...(repointed ?? (node && sources ? causeAt(node, c.id, sources.contractsDir) : { contract: 'contracts/asyncapi.yaml' })),
        kind: 'asyncapi',
        group: 'message payloads',
        location: name ? `message ${name}` : (c.path ?? 'messages'),
        message: removed ? 'message removed' : asMessageText(c.text ?? c.id ?? 'breaking change'),
        rule: c.id,
      };
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
