/**
 * Helpers of the edge differential tests (edgeRead, graphqlEdge): the same request goes
 * to the service (edge routes first) and to a twin app served by Koa alone, and the two
 * replies must match byte for byte.
 */
import { request } from 'node:http';
import fc from 'fast-check';
import type Koa from 'koa';

export interface Reply {
  status: number;
  /** Lower-cased names; a repeated field's values joined by newlines. */
  headers: Record<string, string>;
  body: Buffer;
}

/** One request on its own connection; `body` without `withLength` goes chunked. */
export function sendRaw(url: string, method: string, headers: Record<string, string>, body?: string, withLength = true): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    if (body !== undefined && withLength) h['content-length'] = String(Buffer.byteLength(body));
    const req = request(url, { method, headers: h, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const out: Record<string, string> = {};
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i].toLowerCase();
          out[name] = out[name] === undefined ? res.rawHeaders[i + 1] : `${out[name]}\n${res.rawHeaders[i + 1]}`;
        }
        resolve({ status: res.statusCode ?? 0, headers: out, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Drops what may differ between the two sides: Date, and the request id unless the
 * client sent one the service echoes (`echoedId`: short and plain).
 */
export function comparableReplies(a: Reply, b: Reply, echoedId: boolean): void {
  for (const r of [a, b]) {
    delete r.headers.date;
    if (!echoedId) delete r.headers['x-request-id'];
  }
}

/** Counts the requests that reach Koa (Koa looks `createContext` up on every request). */
export function countKoa(app: Koa): { count: number } {
  const counter = { count: 0 };
  const create = app.createContext.bind(app);
  app.createContext = (req, res) => {
    counter.count++;
    return create(req, res);
  };
  return counter;
}

/** Mostly requests the edge may serve, sometimes ones it must leave to Koa or refuse. */
export function mostly<T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc.oneof({ arbitrary: good, weight: 4 }, { arbitrary: bad, weight: 1 });
}

/** The metric lines `keep` selects, sorted: both sides must record the same. */
export async function metricLines(m: { registry: { metrics(): Promise<string> } }, keep: (line: string) => boolean): Promise<string[]> {
  return (await m.registry.metrics()).split('\n').filter(keep).sort();
}
