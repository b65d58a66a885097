import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { inTurn, MAX_WAITING_PER_CONNECTION } from './server';

/** Writes `bytes` on a fresh connection; resolves with what came back once the server closes it, or once `n` answers came. */
function exchange(port: number, bytes: string, n: number): Promise<string[]> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let got = '';
    const done = () => {
      socket.destroy();
      resolve([...got.matchAll(/\r\n\r\n(r\d+)/g)].map((m) => m[1]));
    };
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if ((got.match(/HTTP\/1\.1 200/g) ?? []).length >= n) done();
    });
    socket.on('error', () => undefined);
    socket.on('close', done);
  });
}

const pipelined = (n: number) => Array.from({ length: n }, (_, i) => `GET /r${i} HTTP/1.1\r\nHost: x\r\n\r\n`).join('');

describe('inTurn: pipelined requests one after another', () => {
  it('runs each in its turn, in order; a connection with more than MAX_WAITING_PER_CONNECTION waiting is cut after the answer in progress, none of the waiting run', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const ran: string[] = [];
    const server = createServer(
      inTurn(
        (req: IncomingMessage, res: ServerResponse) => {
          ran.push(req.url ?? '');
          // /r0 waits for the test; every other answer at once.
          if (req.url === '/r0') void held.then(() => res.end('r0'));
          else res.end(req.url?.slice(1));
        },
        // Cut while /r0 is in progress: its answer (its request may have written) still goes out.
        () => release(),
      ),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    try {
      // Too many behind an answer in progress: that answer comes, then the connection ends; none of the waiting ran.
      const flood = await exchange(port, pipelined(MAX_WAITING_PER_CONNECTION + 2), MAX_WAITING_PER_CONNECTION + 2);
      expect(flood).toEqual(['r0']);
      expect(ran).toEqual(['/r0']);
      // As many as may wait: each runs in its turn, in order.
      ran.length = 0;
      const n = MAX_WAITING_PER_CONNECTION + 1;
      expect(await exchange(port, pipelined(n), n)).toEqual(Array.from({ length: n }, (_, i) => `r${i}`));
      expect(ran).toEqual(Array.from({ length: n }, (_, i) => `/r${i}`));
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
