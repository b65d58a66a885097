import fc from 'fast-check';
import type { OrderEvent, OrderRecord } from '../store';
import { TopicHub, type Subscriber } from './hub';
import type { Frame } from './frames';

const order = (rev: number): OrderRecord => ({
  id: 1,
  accountId: 1,
  revision: rev,
  status: 'pending',
  items: [],
  currency: 'EUR',
  discount: null,
  note: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
});
const event = (seq: number): OrderEvent => ({ orderId: 1, accountId: 1, seq, type: seq === 1 ? 'order.created' : 'order.updated', order: order(seq), createdAt: '' });

/** The committed event table, with a read delay to widen every race. */
function fakeStore(committed: OrderEvent[], delayMs = () => 0) {
  return {
    async eventsAfter(_orderId: number, afterSeq: number, limit: number) {
      await new Promise((r) => setTimeout(r, delayMs()));
      return committed.filter((e) => e.seq > afterSeq).slice(0, limit);
    },
    /** The events are order 1's. */
    async latestSeqs(orderIds: readonly number[]) {
      await Promise.resolve();
      const newest = committed.at(-1)?.seq;
      return new Map(orderIds.filter((id) => id === 1 && newest !== undefined).map((id) => [id, newest ?? 0]));
    },
  };
}

type Log = ({ kind: 'ack'; seq: number; head: number } | { kind: 'resync'; seq: number; reason: string } | { kind: 'frame'; seq: number } | { kind: 'drop' } | { kind: 'fail' })[];
function recorder(): Subscriber & { log: Log } {
  const log: Log = [];
  return {
    log,
    lastSeq: 0,
    ack: (seq, head) => log.push({ kind: 'ack', seq, head }),
    write: (f: Frame) => log.push({ kind: 'frame', seq: f.seq }),
    resync: (seq, reason) => log.push({ kind: 'resync', seq, reason }),
    drop: () => log.push({ kind: 'drop' }),
    fail: () => log.push({ kind: 'fail' }),
  };
}
const tick = () => new Promise((r) => setTimeout(r, 5));
/** Resolves once everything queued on the topic so far has run (a subscription queued behind it), whatever the machine's speed. */
const drained = (hub: TopicHub, seq: number) => hub.subscribe(1, undefined, recorder(), seq);

describe('TopicHub', () => {
  it('a publish queued before a subscription neither reaches nor drops the new subscriber', async () => {
    const committed = [event(1), event(2)];
    const hub = new TopicHub({ store: fakeStore(committed, () => 3), ringSize: 10 });
    const first = recorder();
    await hub.subscribe(1, undefined, first, 2);
    committed.push(event(3));
    hub.publish(event(3)); // queued
    const second = recorder();
    const subscribed = hub.subscribe(1, 2, second, 3);
    await subscribed;
    await drained(hub, 3);
    expect(second.log).toEqual([
      { kind: 'ack', seq: 2, head: 3 },
      { kind: 'frame', seq: 3 },
    ]);
    expect(first.log).toEqual([
      { kind: 'ack', seq: 2, head: 2 },
      { kind: 'frame', seq: 3 },
    ]);
  });

  it('reconcile: an event committed but never published (its news lost with its writer) reaches the subscribers; an up-to-date topic reads nothing', async () => {
    const committed = [event(1), event(2)];
    const store = fakeStore(committed);
    const hub = new TopicHub({ store, ringSize: 10 });
    const sub = recorder();
    await hub.subscribe(1, undefined, sub, 2);
    const reads = jest.spyOn(store, 'eventsAfter');
    await hub.reconcile();
    await drained(hub, 2);
    expect(reads).not.toHaveBeenCalled();
    committed.push(event(3)); // committed elsewhere; no publish ever comes
    await hub.reconcile();
    await drained(hub, 3);
    expect(sub.log).toEqual([
      { kind: 'ack', seq: 2, head: 2 },
      { kind: 'frame', seq: 3 },
    ]);
  });

  it('the wire rule: the ack carries the resume point, never the head, so one missed write is replayed', async () => {
    const committed = [event(1), event(2), event(3)];
    const hub = new TopicHub({ store: fakeStore(committed), ringSize: 10 });
    const sub = recorder();
    await hub.subscribe(1, 2, sub, 3);
    // A client applying only the contract's wire rule (last = 2): ack 2 is no position change, frame 3 is last + 1.
    expect(sub.log).toEqual([
      { kind: 'ack', seq: 2, head: 3 },
      { kind: 'frame', seq: 3 },
    ]);
    const zero = recorder();
    await hub.subscribe(1, 0, zero, 3); // since 0: seen nothing, replay from seq 1
    expect(zero.log).toEqual([{ kind: 'ack', seq: 0, head: 3 }, ...[1, 2, 3].map((seq) => ({ kind: 'frame', seq }))]);
    const live = recorder();
    await hub.subscribe(1, undefined, live, 3); // no since: live from the head
    expect(live.log).toEqual([{ kind: 'ack', seq: 3, head: 3 }]);
  });

  it('live only starts at the revision the caller admitted, not at the head: a write committed while the topic loads is delivered', async () => {
    // An SSE request is admitted at revision 1 and gets its 200 (the client's `open`); the
    // client writes revision 2 before the topic's load has read the event table.
    const committed = [event(1), event(2)];
    const hub = new TopicHub({ store: fakeStore(committed), ringSize: 10 });
    const sub = recorder();
    await hub.subscribe(1, undefined, sub, 1);
    expect(sub.log).toEqual([
      { kind: 'ack', seq: 1, head: 2 },
      { kind: 'frame', seq: 2 },
    ]);
    // The same on a loaded topic whose ring is already past the admitted revision.
    const late = recorder();
    await hub.subscribe(1, undefined, late, 1);
    expect(late.log).toEqual([
      { kind: 'ack', seq: 1, head: 2 },
      { kind: 'frame', seq: 2 },
    ]);
  });

  it('since ahead of the topic: ack at since, then a resync that sets the position to the head', async () => {
    const committed = [event(1), event(2), event(3)];
    const hub = new TopicHub({ store: fakeStore(committed), ringSize: 10 });
    const sub = recorder();
    await hub.subscribe(1, 7, sub, 3);
    expect(sub.log).toEqual([
      { kind: 'ack', seq: 7, head: 3 },
      { kind: 'resync', seq: 3, reason: 'since_ahead' },
    ]);
    committed.push(event(4));
    hub.publish(event(4));
    await drained(hub, 4);
    expect(sub.log.at(-1)).toEqual({ kind: 'frame', seq: 4 });
  });

  it('a topic that fails to load fails its subscriber, keeps nothing pending, and a retry works', async () => {
    const committed = [event(1), event(2)];
    const store = fakeStore(committed);
    const errors: unknown[] = [];
    const hub = new TopicHub({ store, ringSize: 10, onError: (err) => errors.push(err) });
    jest.spyOn(store, 'eventsAfter').mockRejectedValueOnce(new Error('store down'));
    const sub = recorder();
    await hub.subscribe(1, 0, sub, 2);
    expect(sub.log).toEqual([{ kind: 'fail' }]);
    expect(errors).toHaveLength(1);
    expect(hub.topicCount).toBe(0);
    const again = recorder();
    await hub.subscribe(1, 0, again, 2);
    expect(again.log).toEqual([
      { kind: 'ack', seq: 0, head: 2 },
      { kind: 'frame', seq: 1 },
      { kind: 'frame', seq: 2 },
    ]);
  });

  it('orders out-of-order publishes by reading the missing events back from the store', async () => {
    const committed = [event(1)];
    const hub = new TopicHub({ store: fakeStore(committed), ringSize: 10 });
    const sub = recorder();
    await hub.subscribe(1, undefined, sub, 1);
    committed.push(event(2), event(3));
    hub.publish(event(3));
    hub.publish(event(2));
    await drained(hub, 3);
    expect(sub.log.filter((l) => l.kind === 'frame')).toEqual([
      { kind: 'frame', seq: 2 },
      { kind: 'frame', seq: 3 },
    ]);
  });

  it('random interleavings: every subscriber gets each seq after its resume point once, in order, or one resync (generated)', async () => {
    // All randomness comes from fast-check (fc.gen), so a failure replays from its seed and path.
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }), // ring size
        fc.array(
          fc.oneof(
            fc.record({ op: fc.constant('write' as const), shuffle: fc.boolean(), pause: fc.boolean() }),
            fc.record({ op: fc.constant('sub' as const), since: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }), pause: fc.boolean() }),
          ),
          { minLength: 1, maxLength: 30 },
        ),
        fc.gen(),
        async (ringSize, ops, g) => {
          const committed = [event(1)];
          const hub = new TopicHub({ store: fakeStore(committed, () => g(fc.integer, { min: 0, max: 2 })), ringSize });
          const subs: { sub: ReturnType<typeof recorder>; since: number | undefined; admitted: number }[] = [];
          let pendingPublish: OrderEvent[] = [];
          const waits: Promise<void>[] = [];
          for (const o of ops) {
            if (o.op === 'write') {
              const e = event(committed.length + 1);
              committed.push(e);
              pendingPublish.push(e);
              if (!o.shuffle) {
                // publish in commit order, or hold back to publish later in reverse (concurrent commits)
                for (const p of pendingPublish.reverse()) hub.publish(p);
                pendingPublish = [];
              }
            } else {
              const sub = recorder();
              subs.push({ sub, since: o.since, admitted: committed.length });
              waits.push(hub.subscribe(1, o.since, sub, committed.length));
            }
            if (o.pause) await tick();
          }
          for (const p of pendingPublish) hub.publish(p);
          await Promise.all(waits);
          await drained(hub, committed.length); // every publish and catch-up queued so far has run
          const last = committed.length;
          for (const { sub, since, admitted } of subs) {
            expect(sub.log.some((l) => l.kind === 'drop' || l.kind === 'fail')).toBe(false);
            const [ack, ...rest] = sub.log;
            if (ack.kind !== 'ack') throw new Error(`first message ${ack.kind}`);
            // The wire rule: the ack is the resume point: since, or when live the revision
            // the subscriber was admitted at (what was committed when it asked).
            const from = since ?? Math.min(admitted, ack.head);
            expect(ack.seq).toBe(from);
            let cur = ack.seq;
            if (rest[0]?.kind === 'resync') {
              // older than the ring, or newer than the topic: told to resync at the topic's head
              const r = rest.shift() as { seq: number; reason: string };
              expect(r.seq).toBe(ack.head);
              expect(r.reason).toBe(from > ack.head ? 'since_ahead' : 'gap_too_old');
              expect(from > ack.head || from < ack.head - ringSize).toBe(true);
              cur = r.seq;
            }
            for (const l of rest) {
              expect(l.kind).toBe('frame');
              expect((l as { seq: number }).seq).toBe(cur + 1);
              cur += 1;
            }
            expect(cur).toBe(last);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  describe('on a bus (scaled out)', () => {
    /** Records watch/unwatch; `watch` resolves when the test says so, as a SUBSCRIBE waits for Redis. */
    function fakeBus() {
      const log: string[] = [];
      let release: () => void = () => undefined;
      const gate = new Promise<void>((r) => (release = r));
      return {
        log,
        release,
        watch: async (id: number) => {
          log.push(`watch ${id}`);
          await gate;
          log.push(`watching ${id}`);
        },
        unwatch: (id: number) => void log.push(`unwatch ${id}`),
      };
    }

    it('watches the topic before loading its ring, and unwatches when its last subscriber leaves', async () => {
      const committed = [event(1)];
      const bus = fakeBus();
      const store = fakeStore(committed);
      const reads: string[] = [];
      const hub = new TopicHub({ store: { eventsAfter: (...a) => (reads.push(`read after ${a[1]}`), store.eventsAfter(...a)), latestSeqs: (ids) => store.latestSeqs(ids) }, bus, ringSize: 10 });
      const sub = recorder();
      const subscribed = hub.subscribe(1, undefined, sub, 1);
      await tick();
      expect(bus.log).toEqual(['watch 1']);
      expect(reads).toEqual([]); // nothing is read before the subscription on the bus is in place
      bus.release();
      await subscribed;
      expect(bus.log).toEqual(['watch 1', 'watching 1']);
      expect(reads.length).toBeGreaterThan(0);
      hub.unsubscribe(1, sub);
      await tick();
      expect(bus.log).toEqual(['watch 1', 'watching 1', 'unwatch 1']);
      expect(hub.topicCount).toBe(0);
    });

    it('catchUpAll reads the events of the topics that are behind only (one query finds them)', async () => {
      const committed = [event(1)];
      const store = fakeStore(committed);
      const hub = new TopicHub({ store, ringSize: 10 });
      await hub.subscribe(1, undefined, recorder(), 1);
      await hub.subscribe(2, undefined, recorder(), 0); // a topic with no news
      const reads = jest.spyOn(store, 'eventsAfter');
      const heads = jest.spyOn(store, 'latestSeqs');
      await hub.catchUpAll();
      await drained(hub, 1);
      expect([heads.mock.calls.length, reads.mock.calls.length]).toEqual([1, 0]); // nobody behind: no event read
      committed.push(event(2));
      await hub.catchUpAll();
      await drained(hub, 2);
      expect(reads.mock.calls.map((c) => c[0])).toEqual([1]); // topic 1 only
    });

    it('catchUpAll delivers, in order, the events the bus never brought', async () => {
      const committed = [event(1)];
      const store = fakeStore(committed);
      const hub = new TopicHub({ store, ringSize: 10 });
      const sub = recorder();
      await hub.subscribe(1, undefined, sub, 1);
      committed.push(event(2), event(3)); // committed elsewhere; their messages were lost
      const reads = jest.spyOn(store, 'eventsAfter');
      await Promise.all(Array.from({ length: 5 }, () => hub.catchUpAll())); // five peers reconnecting: one read is queued, not five
      await hub.subscribe(1, undefined, recorder(), 1); // queued behind the catch-up: resolves once it is done
      expect(reads).toHaveBeenCalledTimes(1);
      expect(sub.log).toEqual([
        { kind: 'ack', seq: 1, head: 1 },
        { kind: 'frame', seq: 2 },
        { kind: 'frame', seq: 3 },
      ]);
      hub.publish(event(3)); // a late copy changes nothing
      await drained(hub, 3);
      expect(sub.log).toHaveLength(3);
    });
  });
});

describe('TopicHub under REPLAY_MAX_BYTES', () => {
  it('a resume into events the byte bound evicted gets a resync, never a gap; a shallower one is replayed', async () => {
    const committed = Array.from({ length: 50 }, (_, i) => event(i + 1));
    const one = JSON.stringify(committed[1]).length; // about one stored event
    // Room for about 10 of this topic's 50 events, though its ring may hold 100.
    const hub = new TopicHub({ store: fakeStore(committed), ringSize: 100, ringMaxBytes: 10 * (one + 200) });
    const live = recorder();
    await hub.subscribe(1, undefined, live, 50);
    expect(hub.ringBudget!.used).toBeLessThanOrEqual(hub.ringBudget!.maxBytes);

    const deep = recorder();
    await hub.subscribe(1, 5, deep, 50);
    expect(deep.log).toEqual([
      { kind: 'ack', seq: 5, head: 50 },
      { kind: 'resync', seq: 50, reason: 'gap_too_old' },
    ]);
    const shallow = recorder();
    await hub.subscribe(1, 47, shallow, 50);
    expect(shallow.log).toEqual([{ kind: 'ack', seq: 47, head: 50 }, ...[48, 49, 50].map((seq) => ({ kind: 'frame', seq }))]);
  });
});
