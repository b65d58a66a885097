import { STATUS_CODES } from 'node:http';
import { PassThrough } from 'node:stream';
import { PROBLEMS, refusal, type ProblemCode } from './problem';
import { writeRefusal } from './upgrade';

/** What writeRefusal puts on a socket: the status line and the body. */
function written(code: ProblemCode): Promise<{ statusLine: string; body: Record<string, unknown> }> {
  const socket = new PassThrough();
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  return new Promise((resolve) => {
    socket.on('end', () => {
      const [head, body] = text.split('\r\n\r\n');
      resolve({ statusLine: head.split('\r\n')[0], body: JSON.parse(body) as Record<string, unknown> });
    });
    writeRefusal(undefined, socket, refusal(code));
  });
}

describe('a refusal written on a raw socket (an upgrade, an unparsable request)', () => {
  it("has node's reason phrase for its status, as every other answer does; the problem's title is in the body", async () => {
    for (const code of Object.keys(PROBLEMS) as ProblemCode[]) {
      const [status, title] = PROBLEMS[code];
      const { statusLine, body } = await written(code);
      expect(statusLine).toBe(`HTTP/1.1 ${status} ${STATUS_CODES[status]}`);
      expect(body).toMatchObject({ status, title, code });
    }
  });
});
