/**
 * Request body media types: can every client that sent a released operation a body still
 * send it the same way?
 *
 * oasdiff 1.15 reports a request media type that was renamed (`application/merge-patch+json`
 * to `application/json`, `...; version=2` to `...; version=3`) as the same media type
 * modified, under `requestBody.content.modified.<type>.name`, and no rule fires on it
 * (`request-body-media-type-removed` fires only when it cannot pair the two). A released
 * client still sends the released type, and the server answers 415. So the gate compares the
 * names itself: each media type a released operation's body took must still be one of the
 * current operation's, exactly as written (parameters included). An operation that is gone
 * is oasdiff's finding (`api-removed...`), not reported twice here.
 */
import { asRecord, type Finding } from './types';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The media types of an operation's request body, following one `$ref` to `components.requestBodies`. */
function bodyTypes(doc: Record<string, unknown>, op: Record<string, unknown>): string[] | undefined {
  let body = asRecord(op.requestBody);
  const ref = body.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/components/requestBodies/')) body = asRecord(asRecord(asRecord(doc.components).requestBodies)[ref.slice('#/components/requestBodies/'.length)]);
  if (!('content' in body)) return undefined;
  return Object.keys(asRecord(body.content));
}

/** `~` and `/` escaped for a JSON pointer segment (RFC 6901). */
const segment = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** `reported(location, type)`: oasdiff already reported that media type removed from that operation (then not again here). */
export function checkRequestMediaTypes(released: Record<string, unknown>, current: Record<string, unknown>, reported: (location: string, type: string) => boolean = () => false): Finding[] {
  const findings: Finding[] = [];
  const before = asRecord(released.paths);
  const after = asRecord(current.paths);
  for (const path of Object.keys(before)) {
    for (const method of METHODS) {
      const op = asRecord(before[path])[method];
      const now = asRecord(after[path])[method];
      if (op === undefined || now === undefined) continue;
      const sent = bodyTypes(released, asRecord(op));
      if (!sent) continue;
      const taken = new Set(bodyTypes(current, asRecord(now)) ?? []);
      for (const type of sent) {
        const location = `${method.toUpperCase()} ${path}`;
        if (taken.has(type) || reported(location, type)) continue;
        findings.push({
          kind: 'openapi',
          group: 'request media types',
          location,
          message: `the request media type \`${type}\` is no longer taken (now: ${[...taken].map((t) => `\`${t}\``).join(', ') || 'none'}): a released client sending it gets 415`,
          rule: 'request-body-media-type-renamed',
          cause: `${location}: request media type \`${type}\` removed or renamed`,
          contract: 'contracts/openapi.yaml',
          pointer: `/paths/${segment(path)}/${method}/requestBody/content`,
        });
      }
    }
  }
  return findings;
}
