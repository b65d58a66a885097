/**
 * The WebSocket close codes a channel lists (`x-close-codes` on an AsyncAPI channel: code ->
 * what it means and what the client does). A client acts on the code (reconnects on 1013 and
 * 1001, gives up on 1008), so a listed code gone, or renumbered (1013 to 4013: one removed,
 * one added), breaks a released client's handling; `@asyncapi/diff` would leave the extension
 * unclassified. A code added passes (a client treats a code it does not know as a drop).
 */
import { asRecord, type Finding } from './types';

const codesOf = (channel: unknown): string[] => Object.keys(asRecord(asRecord(channel)['x-close-codes']));

export function checkCloseCodes(released: Record<string, unknown>, current: Record<string, unknown>): Finding[] {
  const findings: Finding[] = [];
  for (const [channel, before] of Object.entries(asRecord(released.channels))) {
    const now = asRecord(current.channels)[channel];
    if (now === undefined) continue; // the channel's removal is @asyncapi/diff's finding
    const kept = new Set(codesOf(now));
    for (const code of codesOf(before).filter((c) => !kept.has(c))) {
      findings.push({
        kind: 'asyncapi',
        group: 'channels and operations',
        location: `channel ${channel}, close code ${code}`,
        message: `close code ${code} is no longer one the channel closes with: released clients that act on it (reconnect, or give up) meet another`,
        rule: 'close-code-removed',
        cause: `channel ${channel}: close code ${code} removed`,
        contract: 'contracts/asyncapi.yaml',
        pointer: `/channels/${channel}/x-close-codes`,
      });
    }
  }
  return findings;
}
