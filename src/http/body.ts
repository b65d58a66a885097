import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { httpProblem } from './problem';
import { parseMediaType, versionOf } from './mediaType';

/** Default request body limit; `BODY_LIMIT_BYTES` overrides it. Orders are small. */
export const DEFAULT_BODY_LIMIT = 64 * 1024;

/** The media type without parameters, lowercased (`application/json; charset=utf-8` -> `application/json`); '' when there is none. */
export function baseMediaType(value: string | undefined): string {
  return (value === undefined ? null : parseMediaType(value))?.type ?? '';
}

/** `version` (or its synonym `v`) parameter of a media type, unquoted; undefined when absent. */
export function versionParam(value: string): string | undefined {
  return versionOf(value);
}

/**
 * Reads a request body as UTF-8 text. Errors are the client's: 413 over the limit
 * (checked against Content-Length before reading, and while reading), 400 when the
 * bytes cannot be read. raw-body enforces the limit. The one body reader of the
 * service: REST parses JSON from it below, /graphql reads its parameters from it.
 */
export function readBodyText(ctx: Context, limit: number): Promise<string> {
  return readRequestText(ctx.req, limit);
}

/** The same without Koa (routes served on node:http, edge.ts). */
export async function readRequestText(req: IncomingMessage, limit: number): Promise<string> {
  try {
    return await getRawBody(req, { limit, length: req.headers['content-length'] || undefined, encoding: 'utf8' });
  } catch (err) {
    const e = err as { type?: string; status?: number };
    if (e.type === 'entity.too.large') throw httpProblem('PAYLOAD_TOO_LARGE', `Request body exceeds ${limit} bytes`);
    throw httpProblem('BAD_REQUEST', 'The request body could not be read');
  }
}

/**
 * Reads and parses a JSON request body (`readBodyText`, then 400 for text that is not
 * JSON). JSON parsing is ours because the body's media type (merge-patch, vendor types)
 * decides what is accepted.
 */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  const raw = await readBodyText(ctx, limit);
  if (raw.trim() === '') throw httpProblem('BAD_REQUEST', 'A JSON request body is required');
  try {
    return JSON.parse(raw);
  } catch {
    throw httpProblem('BAD_REQUEST', 'The request body is not valid JSON');
  }
}
