/**
 * The API reference (/docs, /docs/realtime, /docs/graphql, and the SDK's, /docs/sdk: pages
 * rendered by codegen into generated/docs/) and the contracts it is rendered from, served as
 * they are: /openapi.yaml (and /openapi.json), /asyncapi.yaml, /schema.graphql.
 *
 * Everything here is the same for every client and changes only with a deploy, so it is
 * read once, tagged once (strong ETag over the bytes) and shared by caches for five
 * minutes; If-None-Match answers 304 (RFC 9110 13.1.2, weak comparison, lists and `*`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import YAML from 'yaml';
import { contentTag, evaluate } from '../conditional';
import type { OperationHandlers } from './operations';
import { serialized } from './representationCache';

/** The same bytes for everyone: a shared cache may keep them for five minutes (RFC 9111 5.2.2). */
export const REFERENCE_CACHE_CONTROL = 'public, max-age=300';

type DocsOperation = 'getDocs' | 'getRealtimeDocs' | 'getGraphqlDocs' | 'getSdkDocs' | 'getDocsScript' | 'getOpenApiYaml' | 'getOpenApiJson' | 'getAsyncApiYaml' | 'getGraphqlSchema';

interface Served<T extends string> {
  body: string;
  contentType: T;
  etag: string;
}

/**
 * The checkout this code runs from: src/http/ under tsx and jest, dist/src/http/ after
 * `npm run build`. contracts/ and generated/docs/ are read from there, not copied into dist.
 */
export function projectRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'contracts', 'openapi.yaml'))) return dir;
    if (dirname(dir) === dir) throw new Error(`contracts/openapi.yaml not found above ${from}`);
  }
}

function served<T extends string>(body: string, contentType: T): Served<T> {
  return { body, contentType, etag: contentTag(body) };
}

/** A JSON document served as its value (the contract's type), its text written once (respond.ts reads `serialized`). */
function servedJson(value: Record<string, unknown>): Served<'application/json'> & { value: Record<string, unknown> } {
  const text = `${JSON.stringify(value, null, 2)}\n`;
  serialized.set(value, text);
  return { ...served(text, 'application/json'), value };
}

function answer<T extends string>(file: Served<T>, ifNoneMatch: string | undefined) {
  const headers = { ETag: file.etag, 'Cache-Control': REFERENCE_CACHE_CONTROL };
  const outcome = evaluate({ method: 'GET', ifNoneMatch, current: { selected: file.etag, all: () => [file.etag] } });
  if (outcome === 'not_modified') return { status: 304 as const, headers };
  return { status: 200 as const, headers, contentType: file.contentType, body: file.body };
}

/** `answer` for a JSON document: the same statuses and headers, the body as its value. */
function answerJson(file: ReturnType<typeof servedJson>, ifNoneMatch: string | undefined) {
  const a = answer(file, ifNoneMatch);
  return a.status === 304 ? a : { ...a, body: file.value };
}

function load(root: string) {
  const read = (rel: string) => readFileSync(join(root, rel), 'utf8');
  const openapi = read('contracts/openapi.yaml');
  return {
    rest: served(read('generated/docs/rest.html'), 'text/html'),
    realtime: served(read('generated/docs/realtime.html'), 'text/html'),
    graphql: served(read('generated/docs/graphql.html'), 'text/html'),
    sdk: served(read('generated/docs/sdk.html'), 'text/html'),
    script: served(read('generated/docs/redoc.standalone.js'), 'text/javascript'),
    openapiYaml: served(openapi, 'application/yaml'),
    openapiJson: servedJson(YAML.parse(openapi) as Record<string, unknown>),
    asyncapiYaml: served(read('contracts/asyncapi.yaml'), 'application/yaml'),
    schema: served(read('contracts/schema.graphql'), 'text/plain'),
  };
}

/** Read at most once per process (about 3.5 MB), whatever the number of apps created. */
let cache: { root: string; files: ReturnType<typeof load> } | undefined;

export function docsHandlers(root: string = projectRoot()): Pick<OperationHandlers, DocsOperation> {
  if (cache?.root !== root) cache = { root, files: load(root) };
  const f = cache.files;
  return {
    getDocs: async (req) => answer(f.rest, req.headers['If-None-Match']),
    getRealtimeDocs: async (req) => answer(f.realtime, req.headers['If-None-Match']),
    getGraphqlDocs: async (req) => answer(f.graphql, req.headers['If-None-Match']),
    getSdkDocs: async (req) => answer(f.sdk, req.headers['If-None-Match']),
    getDocsScript: async (req) => answer(f.script, req.headers['If-None-Match']),
    getOpenApiYaml: async (req) => answer(f.openapiYaml, req.headers['If-None-Match']),
    getOpenApiJson: async (req) => answerJson(f.openapiJson, req.headers['If-None-Match']),
    getAsyncApiYaml: async (req) => answer(f.asyncapiYaml, req.headers['If-None-Match']),
    getGraphqlSchema: async (req) => answer(f.schema, req.headers['If-None-Match']),
  };
}
