/**
 * The topic hub: one replay ring per topic `order:<id>`, shared by all its
 * subscribers, fed from committed events (the write path calls `publish` after its
 * transaction commits; a missing seq is read back from the event table), so every
 * acknowledged change reaches the stream with the topic's gap-free seq.
 *
 * No race between replay and live: every operation on a topic (load, publish,
 * subscribe) runs in that topic's queue, one at a time. A publish that arrives while a
 * subscription is being set up waits in the queue (the buffer) and is delivered after
 * the replay; each subscriber drops seqs it already has (de-duplication) and is dropped
 * itself on a hole (it resumes from what it has, as centrifuge does). A replay is read
 * from the ring in one synchronous step, so it is never partial.
 *
 * A topic lives while it has subscribers; its ring is loaded from the event table when
 * the first one arrives, so a topic nobody watches costs nothing.
 *
 * Scaled out, the event table is the shared ring: every instance loads the same seqs
 * from it and keeps the last `ringSize` of them in memory, so a client resumes on any
 * instance with the same answer (replay, or resync beyond the ring). The bus only
 * brings news of events; the hub watches a topic on the bus before it loads the ring
 * (nothing published after the load can be missed) and reads back whatever the bus
 * lost (`catchUpAll` when the bus reconnects). News the bus never carried (a writer whose
 * connection was down when it committed, and which died before it reconnected to say so)
 * is found by `reconcile`, which compares every ring with the store's newest seq.
 */
import { MAX_BATCH, type OrderEvent, type Store } from '../store';
import { eventFrame, type Frame, type ResyncReason } from './frames';
import { ReplayRing, RingBudget } from './ring';
import type { Bus } from '../bus';

/**
 * One subscription, as the hub drives it. The wire rule (asyncapi.yaml, "The wire rule"):
 * on a topic the seq a client receives never goes backwards and only events advance it.
 * So `ack` carries the position the stream continues from (the resume point), never the
 * head; `resync` carries the position after the client's GET, which the client adopts.
 */
export interface Subscriber {
  /** The last seq this subscriber has been given (or told to resync to). */
  lastSeq: number;
  /**
   * The subscription is live. `from`: the stream continues after it (the client's
   * `since`, or the head when it subscribed live); `head`: the topic's newest seq.
   * Replayed frames (seq from + 1 ... head), or one resync, follow.
   */
  ack(from: number, head: number): void;
  write(frame: Frame): void;
  /** `since` is older than the ring, or ahead of the topic: GET the order; frames after `seq` follow. */
  resync(seq: number, reason: ResyncReason): void;
  /** A hole in delivery: end the subscription so the client resumes from `lastSeq`. */
  drop(reason: 'gap'): void;
  /** The topic could not be loaded (store failure): the subscription never started; nothing of it is kept. */
  fail(err: unknown): void;
}

interface Topic {
  orderId: number;
  ring: ReplayRing;
  /** Live subscribers: they get every published frame. */
  subs: Set<Subscriber>;
  /** Subscribers whose subscribe step waits in the queue: kept apart so no frame reaches them before their replay. */
  pending: Set<Subscriber>;
  queue: Promise<void>;
  loaded: boolean;
  /** The bus brings this topic's events (watched before the first load; kept until the topic retires). */
  watched: boolean;
  /** A catch-up waits in the queue: another signal adds nothing (N peers reconnecting send N). */
  catchUpQueued: boolean;
}

export interface HubOptions {
  store: Pick<Store, 'eventsAfter' | 'latestSeqs'>;
  /** Where this instance hears of other instances' events (default: nothing to watch, one process). */
  bus?: Pick<Bus, 'watch' | 'unwatch'>;
  /** Frames kept per topic: REPLAY_RATE x REPLAY_WINDOW_S. */
  ringSize: number;
  /**
   * Bytes all rings may hold together (REPLAY_MAX_BYTES; default unbounded): over it the
   * oldest events of the largest rings are dropped (ring.ts `RingBudget`), so a resume
   * older than what is left resyncs.
   */
  ringMaxBytes?: number;
  onError?: (err: unknown, orderId: number) => void;
}

/** Rows read from the event table per query when loading or catching up a topic. */
const EVENT_PAGE = 1000;

export class TopicHub {
  private readonly topics = new Map<number, Topic>();
  /** The rings' shared byte bound, when there is one. */
  readonly ringBudget: RingBudget | undefined;

  constructor(private readonly opts: HubOptions) {
    this.ringBudget = opts.ringMaxBytes === undefined ? undefined : new RingBudget(opts.ringMaxBytes);
  }

  /** Topics with at least one subscriber (for metrics and tests). */
  get topicCount(): number {
    return this.topics.size;
  }

  private run(topic: Topic, step: () => Promise<void> | void): Promise<void> {
    const next = topic.queue.then(step).catch((err) => this.opts.onError?.(err, topic.orderId));
    topic.queue = next;
    return next;
  }

  /** Appends the next frame to the ring and delivers it to every live subscriber. */
  private append(topic: Topic, frame: Frame): void {
    topic.ring.push(frame);
    for (const sub of topic.subs) this.deliver(topic, sub, frame);
  }

  /** Reads the event table after the ring's last seq (up to `upTo`) into the ring, delivering as it goes. */
  private async catchUp(topic: Topic, upTo = Infinity): Promise<void> {
    for (;;) {
      const rows = await this.opts.store.eventsAfter(topic.orderId, topic.ring.lastSeq, Math.min(EVENT_PAGE, upTo - topic.ring.lastSeq));
      for (const e of rows) {
        if (e.seq === topic.ring.lastSeq + 1) this.append(topic, eventFrame(e));
      }
      if (rows.length < EVENT_PAGE || topic.ring.lastSeq >= upTo) return;
    }
  }

  /** Delivers to one subscriber in order: duplicates skipped, a hole drops it. */
  private deliver(topic: Topic, sub: Subscriber, frame: Frame): void {
    if (frame.seq <= sub.lastSeq) return;
    if (frame.seq !== sub.lastSeq + 1) {
      topic.subs.delete(sub);
      sub.drop('gap');
      return;
    }
    sub.lastSeq = frame.seq;
    sub.write(frame);
  }

  /** A committed event (after its transaction). Topics nobody watches ignore it. */
  publish(event: OrderEvent): void {
    const topic = this.topics.get(event.orderId);
    if (!topic) return;
    void this.run(topic, async () => {
      if (!topic.loaded || event.seq <= topic.ring.lastSeq) return; // the load read it, or a duplicate
      // Events published out of order (concurrent commits) or lost: read the missing ones.
      if (event.seq > topic.ring.lastSeq + 1) await this.catchUp(topic, event.seq - 1);
      if (event.seq !== topic.ring.lastSeq + 1) return; // already read by catchUp
      this.append(topic, eventFrame(event));
    });
  }

  /**
   * Subscribes after `since` (undefined: live only; 0: seen nothing): ack with the
   * resume point, then the replay from the ring, or one resync when `since` is older
   * than the ring or ahead of the topic, then live frames. `currentSeq` is the order's
   * revision as the caller read it when checking access. A failed load fails the
   * subscriber (`fail`) and keeps nothing of it, so the client can retry.
   */
  subscribe(orderId: number, since: number | undefined, sub: Subscriber, currentSeq: number): Promise<void> {
    let topic = this.topics.get(orderId);
    if (!topic) {
      topic = { orderId, ring: new ReplayRing(this.opts.ringSize, this.ringBudget), subs: new Set(), pending: new Set(), queue: Promise.resolve(), loaded: false, watched: false, catchUpQueued: false };
      this.topics.set(orderId, topic);
    }
    const t = topic;
    t.pending.add(sub); // so the topic is not retired while this waits in the queue
    return this.run(t, async () => {
      try {
        if (!t.loaded) {
          if (!t.watched) await this.opts.bus?.watch(orderId); // before the load: every later event reaches publish
          t.watched = true;
          t.ring.resetTo(Math.max(0, currentSeq - t.ring.capacity));
          await this.catchUp(t);
          t.loaded = true;
        } else if (currentSeq > t.ring.lastSeq) {
          // The caller saw a newer revision than the ring holds (its publish is still on the
          // way, or was lost): read the difference. Otherwise the publish path keeps the ring
          // current, and a reconnect storm costs no store read per subscription.
          await this.catchUp(t);
        }
      } catch (err) {
        if (!t.pending.delete(sub)) return; // unsubscribed while waiting: nobody to tell
        this.retireIfIdle(t);
        this.opts.onError?.(err, orderId);
        sub.fail(err);
        return;
      }
      if (!t.pending.delete(sub)) return; // unsubscribed while waiting
      t.subs.add(sub);
      const head = t.ring.lastSeq;
      // Live only (no `since`): from the revision the caller read when it admitted the
      // request, not from the head now. An SSE client has its `open` before this runs, and
      // a write it (or anyone) commits while the topic loads is already in the ring here:
      // starting at the head would skip it for good (the `eventsource` package lost events
      // this way under load in CI). Normally currentSeq equals the head and nothing replays.
      if (since === undefined) since = Math.min(currentSeq, head);
      sub.lastSeq = since;
      sub.ack(since, head);
      const replay = since > head ? ({ kind: 'ahead' } as const) : t.ring.after(since);
      if (replay.kind !== 'frames') {
        sub.lastSeq = head;
        sub.resync(head, replay.kind === 'ahead' ? 'since_ahead' : 'gap_too_old');
        return;
      }
      for (const frame of replay.frames) this.deliver(t, sub, frame);
    });
  }

  /**
   * The bus may have lost messages (it reconnected): every loaded topic that is behind the
   * event table reads it after its ring's last seq and delivers what it finds, in its own
   * queue. Which are behind is read as `reconcile` reads it, one query per `MAX_BATCH`
   * topics: a reconnect, which every instance hears at once, would otherwise cost each one
   * a query per watched topic, all at once, ahead of the requests in the pool. If that read
   * fails, every topic reads its own (their failures are reported per topic). Resolves once
   * the catch-ups are queued.
   */
  async catchUpAll(): Promise<void> {
    await this.reconcile().catch(() => {
      for (const topic of this.topics.values()) if (topic.loaded) this.queueCatchUp(topic);
    });
  }

  private queueCatchUp(topic: Topic): void {
    if (topic.catchUpQueued) return;
    topic.catchUpQueued = true;
    void this.run(topic, () => {
      topic.catchUpQueued = false; // a signal from now on may mean events this read misses: queue another
      return topic.loaded ? this.catchUp(topic) : undefined;
    });
  }

  /**
   * Anti-entropy, for news the bus never carried: an event reaches the other instances
   * only as a bus message, and one whose writer lost its connection before publishing and
   * died before reconnecting (when it would have told every instance to `catchUpAll`) is
   * announced by nobody; its subscribers would wait for the topic's next event. Every
   * loaded topic's ring is compared with the store's newest seq (one read per `MAX_BATCH`
   * topics: `latestSeqs`) and the topics behind read the rest in their queue. Run every
   * `RECONCILE_MS` (realtime/index.ts).
   */
  async reconcile(): Promise<void> {
    const loaded = [...this.topics.values()].filter((t) => t.loaded);
    for (let i = 0; i < loaded.length; i += MAX_BATCH) {
      const chunk = loaded.slice(i, i + MAX_BATCH);
      const heads = await this.opts.store.latestSeqs(chunk.map((t) => t.orderId));
      for (const topic of chunk) if ((heads.get(topic.orderId) ?? 0) > topic.ring.lastSeq) this.queueCatchUp(topic);
    }
  }

  unsubscribe(orderId: number, sub: Subscriber): void {
    const topic = this.topics.get(orderId);
    if (!topic) return;
    topic.subs.delete(sub);
    topic.pending.delete(sub);
    if (topic.subs.size === 0 && topic.pending.size === 0) void this.run(topic, () => this.retireIfIdle(topic));
  }

  /** Forgets a topic nobody watches any more (in its queue, so a subscription waiting there keeps it). */
  private retireIfIdle(topic: Topic): void {
    if (topic.subs.size === 0 && topic.pending.size === 0 && this.topics.get(topic.orderId) === topic) {
      this.topics.delete(topic.orderId);
      topic.ring.dispose();
      if (topic.watched) this.opts.bus?.unwatch(topic.orderId);
    }
  }
}
