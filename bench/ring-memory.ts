/**
 * `node --expose-gc --import tsx bench/ring-memory.ts`: what the replay rings hold in
 * memory, per stored event and per watched topic. Fills `TOPICS` rings of `CAPACITY`
 * slots (REPLAY_RATE x REPLAY_WINDOW_S, default 300) with events the way the hub does
 * (frameOf of a realistic order event, pushed to the ring), then measures the heap and
 * the Buffer memory (V8 heap + external + array buffers) after full collections,
 * against the same process before the rings existed. Also prints the event's JSON size,
 * so the overhead over the JSON text is visible.
 */
import { eventMessage, frameOf } from '../src/realtime/frames';
import { ReplayRing, RingBudget } from '../src/realtime/ring';
import type { OrderEvent } from '../src/store';

const TOPICS = Number(process.env.RING_TOPICS ?? 1000);
const CAPACITY = Number(process.env.RING_CAPACITY ?? 300);

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

function event(orderId: number, seq: number): OrderEvent {
  const at = new Date(1_750_000_000_000 + seq * 1000).toISOString();
  return {
    orderId,
    accountId: 7,
    seq,
    type: 'order.updated',
    createdAt: at,
    order: {
      id: orderId,
      accountId: 7,
      revision: seq,
      status: 'paid',
      items: Array.from({ length: 4 }, (_, i) => ({ sku: `SKU-${orderId}-${i}-ABCDEFGH`, quantity: 1 + i, unit_price_cents: 1999 + i })),
      currency: 'EUR',
      discount: { code: 'SPRING10', percent: 10 },
      note: `Leave at the door, ring twice (${seq})`.padEnd(120, '.'),
      createdAt: at,
      updatedAt: at,
    },
  };
}

function used(): number {
  for (let i = 0; i < 4; i++) gc!();
  const m = process.memoryUsage();
  return m.heapUsed + m.external; // external includes arrayBuffers (Buffers' memory)
}

const sample = frameOf(eventMessage(event(1, 1)));
const jsonBytes = sample.ws.length - 4; // the text frame's payload (header 4 bytes at this size)
const before = used();
// A bound no test reaches: only to compare what the budget counts (REPLAY_MAX_BYTES) with what is measured.
// (Before rings kept only what a replay needs, ReplayRing took no budget: drop the argument to measure that build.)
const budget = new RingBudget(2 ** 50);
const rings: ReplayRing[] = [];
for (let t = 0; t < TOPICS; t++) {
  const ring = new ReplayRing(CAPACITY, budget);
  for (let s = 1; s <= CAPACITY; s++) ring.push(frameOf(eventMessage(event(t + 1, s))));
  rings.push(ring);
}
const after = used();
const perTopic = (after - before) / TOPICS;
const perEvent = perTopic / CAPACITY;
console.log(
  JSON.stringify({
    topics: TOPICS,
    capacity: CAPACITY,
    eventJsonBytes: jsonBytes,
    sseFrameBytes: sample.sse.length,
    wsFrameBytes: sample.ws.length,
    bytesPerStoredEvent: Math.round(perEvent),
    bytesPerWatchedTopic: Math.round(perTopic),
    countedBytesPerStoredEvent: Math.round(budget.used / (TOPICS * CAPACITY)),
    projected10kTopicsMiB: Math.round((perTopic * 10_000) / 2 ** 20),
  }),
);
if (rings.length !== TOPICS) throw new Error('unreachable'); // keeps the rings alive until measured
