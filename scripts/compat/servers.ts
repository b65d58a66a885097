/**
 * Where a client connects, beyond what `@asyncapi/diff` judges (a server's host and protocol):
 * a server's `pathname` (it prefixes every channel address on it: `/v2` added moves every URL),
 * and the servers a channel is served on (`channels.<c>.servers`: an SSE channel re-pointed to the
 * WebSocket server tells released EventSource clients to speak another protocol). Both fail when a
 * released value changes; a server added to a channel's list passes.
 */
import { asRecord, type Finding } from './types';

const finding = (location: string, message: string, rule: string, pointer: string): Finding => ({
  kind: 'asyncapi',
  group: 'channels and operations',
  location,
  message,
  rule,
  cause: location,
  contract: 'contracts/asyncapi.yaml',
  pointer,
});

const refsOf = (channel: unknown): string[] => {
  const list = asRecord(channel).servers;
  return Array.isArray(list) ? list.map((s) => String(asRecord(s).$ref)) : [];
};

export function checkServers(released: Record<string, unknown>, current: Record<string, unknown>): Finding[] {
  const findings: Finding[] = [];
  for (const [name, before] of Object.entries(asRecord(released.servers))) {
    const after = asRecord(current.servers)[name];
    if (after === undefined) continue; // a server removed: @asyncapi/diff's finding
    const pathOf = (server: unknown): string => {
      const p = asRecord(server).pathname;
      return typeof p === 'string' ? p : '';
    };
    const [was, is] = [pathOf(before), pathOf(after)];
    if (was !== is)
      findings.push(
        finding(
          `server ${name}`,
          `server ${name}'s pathname changed from "${was}" to "${is}": every address on it moves, and released clients connect to the old one`,
          'server-pathname-changed',
          `/servers/${name}/pathname`,
        ),
      );
  }
  for (const [channel, before] of Object.entries(asRecord(released.channels))) {
    const after = asRecord(current.channels)[channel];
    if (after === undefined) continue;
    const kept = refsOf(after);
    // No list means every server (AsyncAPI 3): only a released list can lose a member.
    if (kept.length === 0) continue;
    for (const ref of refsOf(before).filter((r) => !kept.includes(r))) {
      findings.push(
        finding(
          `channel ${channel}, server ${ref}`,
          `channel ${channel} is no longer served on ${ref}: released clients that reach it there (with that protocol) fail`,
          'channel-server-removed',
          `/channels/${channel}/servers`,
        ),
      );
    }
  }
  return findings;
}
