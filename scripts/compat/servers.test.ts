import { checkServers } from './servers';

const doc = (pathname: string | undefined, servers: string[]) => ({
  servers: { ws: { host: 'h', protocol: 'ws', ...(pathname ? { pathname } : {}) }, sse: { host: 'h', protocol: 'http' } },
  channels: { stream: { servers: servers.map((s) => ({ $ref: `#/servers/${s}` })) } },
});

describe('checkServers', () => {
  it("fails a server's pathname added or changed, and a channel re-pointed to another server", () => {
    expect(checkServers(doc(undefined, ['sse']), doc('/v2', ['sse'])).map((f) => f.rule)).toEqual(['server-pathname-changed']);
    expect(checkServers(doc(undefined, ['sse']), doc(undefined, ['ws'])).map((f) => [f.rule, f.location])).toEqual([['channel-server-removed', 'channel stream, server #/servers/sse']]);
  });
  it('passes the same, a server added to a channel, and a channel list dropped (every server)', () => {
    expect(checkServers(doc('/a', ['sse']), doc('/a', ['sse']))).toEqual([]);
    expect(checkServers(doc(undefined, ['sse']), doc(undefined, ['sse', 'ws']))).toEqual([]);
    expect(checkServers(doc(undefined, ['sse']), doc(undefined, []))).toEqual([]);
  });
});
