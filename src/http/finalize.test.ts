import fc from 'fast-check';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Finalizer, LOGGED_PATH_CHARS, loggedPath } from './finalize';
import { HttpTimer, Metrics } from './metrics';

describe('loggedPath', () => {
  it('keeps a path whole up to the bound, else its start and its length: a log line stays short, whatever the client sends (generated)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3 * LOGGED_PATH_CHARS }), (path) => {
        const logged = loggedPath(path);
        if (path.length <= LOGGED_PATH_CHARS) expect(logged).toBe(path);
        else expect(logged).toBe(`${path.slice(0, LOGGED_PATH_CHARS)}... (${path.length} characters)`);
        expect(logged.length).toBeLessThanOrEqual(LOGGED_PATH_CHARS + 40);
      }),
    );
  });
});

describe('the request log line', () => {
  /** A Finalizer whose log lines are collected, parsed. */
  function logged(): { fin: Finalizer; lines: Record<string, unknown>[] } {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    return { fin: new Finalizer(pino({ level: 'info' }, sink), new HttpTimer(new Metrics()), []), lines };
  }

  it('names the request id, method, path (bounded, no query), route template, status and duration', () => {
    const { fin, lines } = logged();
    const long = `/orders/${'9'.repeat(5000)}`;
    const req = { method: 'GET', headers: { 'x-request-id': 'log-line-1' } } as unknown as IncomingMessage;
    const x = fin.begin(req, {} as ServerResponse, long, 'access_token=secret');
    x.route = '/orders/{orderId}';
    fin.end(x, 404);
    expect(lines).toEqual([expect.objectContaining({ reqId: 'log-line-1', method: 'GET', path: loggedPath(long), route: '/orders/{orderId}', status: 404, msg: 'request' })]);
    expect(JSON.stringify(lines[0])).not.toContain('secret');
  });

  it('names the method and path of a request node could not read when its request line was well formed (an unknown method)', () => {
    const { fin, lines } = logged();
    fin.rawAnswer(undefined, 501, 'raw-1', undefined, { method: 'PURGE', target: '/orders/1?access_token=secret' });
    fin.rawAnswer(undefined, 400, 'raw-2');
    expect(lines).toEqual([
      expect.objectContaining({ reqId: 'raw-1', method: 'PURGE', path: '/orders/1', route: 'unmatched', status: 501 }),
      expect.objectContaining({ reqId: 'raw-2', method: 'UNPARSED', path: null, route: 'unmatched', status: 400 }),
    ]);
    expect(JSON.stringify(lines)).not.toContain('secret');
  });
});
