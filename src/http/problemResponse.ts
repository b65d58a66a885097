/**
 * A problem+json answer written on a raw node:http response (routes served before Koa,
 * edge.ts): the same status, headers and body problemMiddleware gives the same problem,
 * so a client cannot tell which path refused it.
 */
import type { ServerResponse } from 'node:http';
import { PROBLEM_MEDIA_TYPE, type HttpProblem } from './problem';

export function writeProblem(res: ServerResponse, err: HttpProblem, head = false): void {
  const json = JSON.stringify(err.problem);
  res.statusCode = err.status;
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  res.setHeader('Content-Type', PROBLEM_MEDIA_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(head ? undefined : json); // HEAD: headers only, as Koa answers it
}
