/**
 * Stalled clients (the slow-consumer rule under load): BENCH_RT_STALLED_CONNECTIONS subscribers of one order stop
 * reading while events of ~10 KB are written to it. Each connection may hold at most
 * MAX_BUFFER_BYTES in user space (the socket's buffer plus its write queue), after which it
 * is closed (WebSocket 1013, SSE end) and its queue dropped; the queued bytes are the hub's
 * shared frames, so what a connection really adds is its references to them. The bench
 * writes until every stalled connection has been closed for backpressure (or a cap of
 * writes), sampling the server's RSS (/proc) and heap (/metrics) after every batch, and
 * reports the peak and the final growth per connection, with the kernel's TCP memory
 * (/proc/net/sockstat, machine-wide: kernel buffers are not in RSS).
 */
import { readFileSync } from 'node:fs';
import { metric } from '../lib/prometheus';
import { pidOfPort, rssOf } from '../lib/realtime-proc';
import { startService } from '../lib/server';
import { Clients } from './clients';
import { kb, mb, sampleMemory } from './memory';
import { type Row } from './rows';
import { call, portOf, scrape, tokenOf, withServer } from './servers';
import { num, SERVICE_ENV, log, sleep } from './settings';

export const STALLED_CONNECTIONS = num('BENCH_RT_STALLED_CONNECTIONS', 2000);
/** The per-connection bound under test (the service's MAX_BUFFER_BYTES for this phase). */
export const STALLED_MAX_BUFFER = num('BENCH_RT_STALLED_MAX_BUFFER', 262_144);
const MAX_WRITES = num('BENCH_RT_STALLED_MAX_WRITES', 3000);

const tcpPages = () => Number(/TCP:.* mem (\d+)/.exec(readFileSync('/proc/net/sockstat', 'utf8'))?.[1] ?? NaN);

async function stalled(clients: Clients, kind: 'ws' | 'sse'): Promise<Row> {
  return withServer(
    // No WebSocket heartbeat: a client stalled for over a minute would be cut for its unanswered
    // ping before its queue overflows, and this phase measures the overflow bound.
    () => startService({ ...SERVICE_ENV, MAX_BUFFER_BYTES: String(STALLED_MAX_BUFFER), WS_HEARTBEAT_S: '0' }),
    async (svc) => {
      const token = await tokenOf(svc);
      const pid = pidOfPort(portOf(svc));
      const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      // An order whose events carry ~10 KB (100 items), as the integration test's.
      const items = Array.from({ length: 100 }, (_, i) => ({ sku: `SKU-${i}-${'x'.repeat(54)}`, quantity: 1, unit_price_cents: 1 }));
      const created = await call(`${svc.url}/orders`, 'POST', auth, JSON.stringify({ items }));
      if (created.status !== 201) throw new Error(`POST /orders answered ${created.status}: ${created.body}`);
      const id = Number((JSON.parse(created.body) as { id: unknown }).id);
      const patch = (n: number) => call(`${svc.url}/orders/${id}`, 'PATCH', { ...auth, 'content-type': 'application/merge-patch+json', 'if-match': '*' }, JSON.stringify({ note: `w${n}` }));
      const before = await sampleMemory(svc, pid);
      const tcpBefore = tcpPages();
      const group = `stalled-${kind}`;
      const o =
        kind === 'ws'
          ? await clients.openWs(
              group,
              svc,
              token,
              Array.from({ length: STALLED_CONNECTIONS }, () => `order:${id}`),
              'lean',
            )
          : await clients.openSse(
              group,
              svc,
              token,
              Array.from({ length: STALLED_CONNECTIONS }, () => `/api/orders/${id}/stream`),
            );
      if (!o.opened) throw new Error(`stalled ${kind}: nothing opened: ${o.firstError}`);
      const paused = (await clients.all<number>({ cmd: 'pause', group })).reduce((a, b) => a + b, 0);
      const opened = await sampleMemory(svc, pid);
      const closes = async () => metric(await scrape(svc), 'orderline_stream_backpressure_closes_total') ?? 0;
      let writes = 0;
      let peakRss = opened.rss;
      let peakHeap = opened.heap;
      let peakTcp = tcpPages();
      let closed = 0;
      let eventBytes = 0;
      const t0 = Date.now();
      while (writes < MAX_WRITES && closed < paused) {
        const batch = await Promise.all([0, 1, 2, 3].map((i) => patch(writes + i)));
        writes += batch.length;
        if (!eventBytes) eventBytes = Buffer.byteLength(batch[0].body);
        if (writes % 20 === 0) {
          const text = await scrape(svc);
          peakRss = Math.max(peakRss, rssOf(pid));
          peakHeap = Math.max(peakHeap, metric(text, 'nodejs_heap_size_used_bytes') ?? 0);
          peakTcp = Math.max(peakTcp, tcpPages());
          closed = metric(text, 'orderline_stream_backpressure_closes_total') ?? 0;
        }
      }
      closed = await closes();
      const ms = Date.now() - t0;
      await sleep(2000);
      const after = await sampleMemory(svc, pid);
      const tcpAfter = tcpPages();
      await clients.all({ cmd: 'close', group });
      const n = paused || 1;
      const perConn = (peakRss - before.rss) / n;
      log(
        `stalled ${kind}: ${paused} paused, ${writes} writes (~${kb(eventBytes)} order per event) in ${(ms / 1000).toFixed(1)} s, ${closed} closed for backpressure; ` +
          `RSS ${mb(before.rss)} -> peak ${mb(peakRss)} -> ${mb(after.rss)} MB; heap ${mb(before.heap)} -> peak ${mb(peakHeap)} -> ${mb(after.heap)} MB; ` +
          `kernel TCP ${mb(tcpBefore * 4096)} -> peak ${mb(peakTcp * 4096)} -> ${mb(tcpAfter * 4096)} MB`,
      );
      return {
        scenario: `${kind}-stalled-memory`,
        service: `${paused} ${kind === 'ws' ? 'WebSocket subscribers' : 'SSE streams'} of one order that stop reading while ~10 KB events are written (MAX_BUFFER_BYTES=${STALLED_MAX_BUFFER}); peak server RSS growth per connection`,
        baseline: `the bound: MAX_BUFFER_BYTES = ${kb(STALLED_MAX_BUFFER)} per connection`,
        serviceFig: `${kb(perConn)} RSS (heap ${kb((peakHeap - before.heap) / n)}) per conn at the peak`,
        baselineFig: `${kb(STALLED_MAX_BUFFER)} per conn`,
        ratio: perConn / STALLED_MAX_BUFFER,
        goal: `<= MAX_BUFFER_BYTES per connection, then closed (${perConn <= STALLED_MAX_BUFFER && closed >= paused ? 'met' : 'missed'})`,
        notes:
          `${writes} writes in ${(ms / 1000).toFixed(1)} s, ${closed}/${paused} closed for backpressure; RSS ${mb(before.rss)} -> ${mb(opened.rss)} (open) -> peak ${mb(peakRss)} -> ${mb(after.rss)} MB 2 s after; ` +
          `heap ${mb(before.heap)} -> peak ${mb(peakHeap)} -> ${mb(after.heap)} MB; kernel TCP memory (machine) ${mb(tcpBefore * 4096)} -> peak ${mb(peakTcp * 4096)} MB`,
      };
    },
  );
}

export async function stalledPhase(clients: Clients): Promise<Row[]> {
  return [await stalled(clients, 'ws'), await stalled(clients, 'sse')];
}
