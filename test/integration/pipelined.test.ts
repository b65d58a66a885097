/**
 * Requests pipelined on one connection are served one after another, in order, as if each
 * had been sent once the answer before it arrived (RFC 9112 9.3.2 allows parallel service
 * only when every request is safe): a read behind a write sees the write, a create behind a
 * create with the same Idempotency-Key is a replay. Runs on every store.
 */
import { connect } from 'node:net';
import fc from 'fast-check';
import { responses } from '../support/rawHttp';
import { startTestServer, type TestServer } from '../support/server';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

/** Writes `bytes` on a fresh connection and reads until the server closes it. */
function untilClosed(bytes: string): Promise<string> {
  const { hostname, port } = new URL(s.url);
  return new Promise((resolve) => {
    const socket = connect({ port: Number(port), host: hostname }, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

const field = (head: string, name: string) => new RegExp(`\\r\\n${name}: ([^\\r]*)`, 'i').exec(head)?.[1];

function request(method: string, path: string, headers: Record<string, string>, body?: string): string {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: ${new URL(s.url).host}`, `Authorization: Bearer ${s.alice.token}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}

type Step = { kind: 'read' } | { kind: 'write'; note: string };
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.constant<Step>({ kind: 'read' }),
  fc.stringMatching(/^[a-z]{1,12}$/).map((note): Step => ({ kind: 'write', note })),
);

describe('pipelined requests on one connection', () => {
  it('each read sees every write pipelined before it: its body and its ETag (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 8 }), async (steps) => {
        const created = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ note: 'base' }) });
        const path = created.headers.get('location')!;
        let etag = created.headers.get('etag')!;
        const bytes = steps.map((st, i) => {
          const last: Record<string, string> = i === steps.length - 1 ? { Connection: 'close' } : {};
          return st.kind === 'read' ? request('GET', path, last) : request('PATCH', path, { 'Content-Type': 'application/merge-patch+json', 'If-Match': '*', ...last }, JSON.stringify({ note: st.note }));
        });
        const got = responses(await untilClosed(bytes.join('')));
        expect(got.map((a) => a.status)).toEqual(steps.map(() => 200));
        let note = 'base';
        steps.forEach((st, i) => {
          if (st.kind === 'write') note = st.note;
          expect((JSON.parse(got[i].body) as { note: string }).note).toBe(note);
          if (st.kind === 'write') etag = field(got[i].head, 'etag')!;
          else expect(field(got[i].head, 'etag')).toBe(etag);
        });
      }),
      { numRuns: 25 },
    );
  });

  it('a create is readable by the request behind it, and a revalidation behind a write gets the new state, not 304', async () => {
    const created = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const path = created.headers.get('location')!;
    const old = created.headers.get('etag')!;
    // Nothing else writes on this server meanwhile: the pipelined create takes the next id.
    const next = `/orders/${((await created.json()) as { id: number }).id + 1}`;
    const got = responses(
      await untilClosed(
        request('PATCH', path, { 'Content-Type': 'application/merge-patch+json', 'If-Match': old }, '{"note":"changed"}') +
          request('GET', path, { 'If-None-Match': old }) +
          request('POST', '/orders', { 'Content-Type': 'application/json' }, '{"note":"second"}') +
          request('GET', next, { Connection: 'close' }),
      ),
    );
    expect(got.map((a) => a.status)).toEqual([200, 200, 201, 200]);
    expect(field(got[1].head, 'etag')).toBe(field(got[0].head, 'etag'));
    expect(field(got[2].head, 'location')).toBe(next);
    expect(JSON.parse(got[3].body)).toMatchObject({ note: 'second' });
  });

  it('a WebSocket handshake behind a create and a read is answered 101 after them, in order', async () => {
    const created = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const next = `/orders/${((await created.json()) as { id: number }).id + 1}`;
    const handshake = request('GET', '/orders', { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' });
    const { hostname, port } = new URL(s.url);
    const got = await new Promise<string>((resolve) => {
      const socket = connect({ port: Number(port), host: hostname }, () =>
        socket.write(request('POST', '/orders', { 'Content-Type': 'application/json' }, '{"note":"before the upgrade"}') + request('GET', next, {}) + handshake),
      );
      let text = '';
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1');
        if (text.includes(' 101 ')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', () => undefined);
    });
    expect([...got.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]))).toEqual([201, 200, 101]);
  });

  it('a create retried behind its original with the same Idempotency-Key is a replay of it', async () => {
    const key = `pipelined-${Date.now()}`;
    const create = (last: boolean) => request('POST', '/orders', { 'Content-Type': 'application/json', 'Idempotency-Key': key, ...(last ? { Connection: 'close' } : {}) }, '{"note":"once"}');
    const got = responses(await untilClosed(create(false) + create(false) + create(true)));
    expect(got.map((a) => a.status)).toEqual([201, 201, 201]);
    expect(got.map((a) => field(a.head, 'idempotent-replayed'))).toEqual([undefined, 'true', 'true']);
    expect(new Set(got.map((a) => field(a.head, 'location'))).size).toBe(1);
  });
});
