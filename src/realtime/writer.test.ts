import { EventEmitter } from 'node:events';
import fc from 'fast-check';
import { BoundedWriter, WriteBatcher, type Sink } from './writer';

/** A socket whose kernel takes what the test says: `accept(n)` drains n bytes and emits 'drain' as Node does. */
class FakeSink extends EventEmitter {
  writableLength = 0;
  writableNeedDrain = false;
  destroyed = false;
  writableEnded = false;
  get writable(): boolean {
    return !this.destroyed && !this.writableEnded;
  }
  readonly highWaterMark = 100;
  get writableHighWaterMark(): number {
    return this.highWaterMark;
  }
  get writableCorked(): number {
    return this.corked;
  }
  delivered: Buffer[] = [];
  pending: Buffer[] = [];
  corked = 0;
  writes = 0;
  /** Writes made while corked (they leave in one system call when uncorked). */
  corkedWrites = 0;
  write(b: Buffer): boolean {
    this.writes++;
    if (this.corked > 0) this.corkedWrites++;
    this.pending.push(b);
    this.writableLength += b.length;
    if (this.writableLength >= this.highWaterMark) this.writableNeedDrain = true;
    return !this.writableNeedDrain;
  }
  cork() {
    this.corked++;
  }
  uncork() {
    this.corked--;
  }
  accept(): void {
    this.delivered.push(...this.pending);
    this.pending = [];
    this.writableLength = 0;
    if (this.writableNeedDrain) {
      this.writableNeedDrain = false;
      this.emit('drain');
    }
  }
}
const sinkOf = (f: FakeSink) => f as unknown as Sink;

describe('BoundedWriter', () => {
  it('passes bytes through while the socket keeps up', () => {
    const s = new FakeSink();
    const w = new BoundedWriter(sinkOf(s), 1000);
    for (let i = 0; i < 5; i++) {
      expect(w.write(Buffer.alloc(10, i))).toBe('ok');
      s.accept();
    }
    expect(Buffer.concat(s.delivered)).toEqual(Buffer.concat([0, 1, 2, 3, 4].map((i) => Buffer.alloc(10, i))));
  });

  it('queues while the socket needs draining and hands the queue over in one corked batch', () => {
    const s = new FakeSink();
    const w = new BoundedWriter(sinkOf(s), 1000);
    w.write(Buffer.alloc(150, 1)); // over the highWaterMark: the socket needs draining
    w.write(Buffer.alloc(10, 2));
    w.write(Buffer.alloc(10, 3));
    expect(s.writes).toBe(1);
    expect(w.heldBytes).toBe(170);
    s.accept();
    expect(s.writes).toBe(3);
    expect(s.corked).toBe(0);
    s.accept();
    expect(Buffer.concat(s.delivered)).toEqual(Buffer.concat([Buffer.alloc(150, 1), Buffer.alloc(10, 2), Buffer.alloc(10, 3)]));
  });

  it('a write that would hold more than maxBytes: slow, the queue is dropped, nothing more is written', () => {
    const s = new FakeSink();
    const w = new BoundedWriter(sinkOf(s), 300);
    w.write(Buffer.alloc(150)); // in the socket
    expect(w.write(Buffer.alloc(100))).toBe('ok'); // queued: 250 held
    expect(w.write(Buffer.alloc(100))).toBe('slow'); // 350 > 300
    expect(w.heldBytes).toBe(150); // only what the socket already had
    expect(w.write(Buffer.alloc(1))).toBe('closed');
    s.accept();
    expect(s.writes).toBe(1); // the dropped queue never reaches the socket
  });

  it('never holds more than maxBytes plus the one write the socket took, whatever the schedule (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 50, max: 2000 }), fc.array(fc.oneof(fc.integer({ min: 1, max: 300 }), fc.constant('drain' as const)), { maxLength: 200 }), (max, ops) => {
        const s = new FakeSink();
        const w = new BoundedWriter(sinkOf(s), max);
        const written: Buffer[] = [];
        let n = 0;
        for (const op of ops) {
          if (op === 'drain') s.accept();
          else {
            const b = Buffer.alloc(op, n++ % 256);
            const r = w.write(b);
            if (r === 'ok') written.push(b);
            if (r !== 'ok') break;
          }
          expect(w.heldBytes).toBeLessThanOrEqual(Math.max(max, s.highWaterMark + 300));
        }
        s.accept();
        s.accept();
        // whatever was accepted arrives in order and whole, until the slow close
        expect(Buffer.concat(written).subarray(0, Buffer.concat(s.delivered).length).equals(Buffer.concat(s.delivered))).toBe(true);
      }),
    );
  });
});

describe('WriteBatcher (WRITE_DELAY_MS)', () => {
  /** A batcher whose timer the test fires (`fire`), counting how many were set. */
  const manual = (delayMs = 50) => {
    const timers: (() => void)[] = [];
    const batcher = new WriteBatcher(delayMs, (fn) => (timers.push(fn), {}));
    return { batcher, timers, fire: () => timers.splice(0).forEach((fn) => fn()) };
  };

  it('holds writes until the delay is up, then hands each connection its queue in one corked batch, in order', () => {
    const { batcher, timers, fire } = manual();
    const [a, b] = [new FakeSink(), new FakeSink()];
    const [wa, wb] = [new BoundedWriter(sinkOf(a), 1000, batcher), new BoundedWriter(sinkOf(b), 1000, batcher)];
    for (let i = 0; i < 3; i++) {
      expect(wa.write(Buffer.alloc(10, i))).toBe('ok');
      expect(wb.write(Buffer.alloc(5, i))).toBe('ok');
    }
    expect([a.writes, b.writes]).toEqual([0, 0]);
    expect(timers).toHaveLength(1); // one timer for every connection, not one each
    expect(wa.heldBytes).toBe(30);
    fire();
    expect([a.writes, a.corkedWrites, a.corked, b.corkedWrites]).toEqual([3, 3, 0, 3]);
    a.accept();
    expect(Buffer.concat(a.delivered)).toEqual(Buffer.concat([0, 1, 2].map((i) => Buffer.alloc(10, i))));
    wa.write(Buffer.alloc(1));
    expect(timers).toHaveLength(1); // the next window
  });

  it('over maxBytes while writes wait for the delay: they go out at once, as without a delay; over it while the peer does not read: slow; a closing connection sends nothing more', () => {
    const { batcher, fire } = manual();
    const s = new FakeSink();
    const w = new BoundedWriter(sinkOf(s), 100, batcher);
    expect(w.write(Buffer.alloc(60, 1))).toBe('ok');
    expect(s.writes).toBe(0);
    // 120 > 100, but the socket was taking bytes: what waited goes, then this write (no 1013 for a reader).
    expect(w.write(Buffer.alloc(60, 2))).toBe('ok');
    expect(s.writes).toBe(2);
    // Now the socket needs draining (its peer has not read): over the bound is a slow consumer.
    expect(w.write(Buffer.alloc(60, 3))).toBe('slow');
    fire();
    s.accept();
    expect(Buffer.concat(s.delivered)).toEqual(Buffer.concat([Buffer.alloc(60, 1), Buffer.alloc(60, 2)]));
    let open = true;
    const c = new FakeSink();
    const wc = new BoundedWriter(sinkOf(c), 100, batcher, () => open);
    wc.write(Buffer.alloc(10));
    open = false; // e.g. the WebSocket's close frame went out meanwhile
    fire();
    expect(c.writes).toBe(0);
  });

  it('whatever the schedule of writes, timer and drains: at most maxBytes held, and what arrives is what was written, in order (generated)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 50, max: 2000 }), fc.array(fc.oneof(fc.integer({ min: 1, max: 300 }), fc.constant('drain' as const), fc.constant('timer' as const)), { maxLength: 200 }), (max, ops) => {
        const { batcher, fire } = manual();
        const s = new FakeSink();
        const w = new BoundedWriter(sinkOf(s), max, batcher);
        const written: Buffer[] = [];
        let n = 0;
        for (const op of ops) {
          if (op === 'drain') s.accept();
          else if (op === 'timer') fire();
          else {
            const b = Buffer.alloc(op, n++ % 256);
            const r = w.write(b);
            if (r !== 'ok') break;
            written.push(b);
          }
          expect(w.heldBytes).toBeLessThanOrEqual(Math.max(max, s.highWaterMark + 300));
        }
        for (let i = 0; i < 3; i++) {
          fire();
          s.accept();
        }
        const got = Buffer.concat(s.delivered);
        expect(Buffer.concat(written).subarray(0, got.length).equals(got)).toBe(true);
        if (!w.stopped) expect(got.length).toBe(Buffer.concat(written).length); // nothing lost while the connection lives
      }),
    );
  });
});
