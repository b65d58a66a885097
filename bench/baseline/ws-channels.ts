/**
 * The subscribe protocol of the bare `ws` baselines (ws-raw.ts, ws-floor.ts): just enough of
 * the service's for the bench clients. `{"type":"subscribe","channel":...}` adds `member` (the
 * WebSocket, or the raw socket under it) to that channel's set and is answered
 * `{"type":"subscribed",...}`; the close removes it from every channel it joined.
 */
import type { WebSocket } from 'ws';

export function serveChannels<T>(ws: WebSocket, member: T, channels: Map<string, Set<T>>): void {
  const mine = new Set<string>();
  ws.on('message', (data, isBinary) => {
    let msg: { type?: unknown; channel?: unknown } | undefined;
    try {
      msg = isBinary ? undefined : (JSON.parse((data as Buffer).toString()) as typeof msg);
    } catch {
      msg = undefined;
    }
    if (msg?.type !== 'subscribe' || typeof msg.channel !== 'string') return;
    let subs = channels.get(msg.channel);
    if (!subs) channels.set(msg.channel, (subs = new Set()));
    subs.add(member);
    mine.add(msg.channel);
    ws.send(JSON.stringify({ type: 'subscribed', channel: msg.channel, seq: 0 }));
  });
  ws.on('close', () => {
    for (const c of mine) channels.get(c)?.delete(member);
  });
  ws.on('error', () => ws.terminate());
}
