/** Raw HTTP/1.1 on a socket, for tests that write requests by hand and read every answer back. */

/** Every response on a connection's bytes, in order (each with a Content-Length, as every answer here has); `heads`: the answers to HEAD requests, by position. */
export function responses(all: string, heads: number[] = []): { status: number; head: string; body: string }[] {
  const out: { status: number; head: string; body: string }[] = [];
  let at = 0;
  while (at < all.length) {
    const end = all.indexOf('\r\n\r\n', at);
    if (end < 0) throw new Error(`a partial head: ${JSON.stringify(all.slice(at, at + 200))}`);
    const head = all.slice(at, end);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
    const bodyless = heads.includes(out.length) || / 304 /.test(head.slice(0, 13));
    out.push({ status: Number(head.slice(9, 12)), head, body: all.slice(end + 4, end + 4 + (bodyless ? 0 : length)) });
    at = end + 4 + (bodyless ? 0 : length);
  }
  return out;
}
