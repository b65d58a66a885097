import fc from 'fast-check';
import { AdmissionQueue } from './admission';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('AdmissionQueue', () => {
  it('lets a connection through at once outside a storm (no turn waited)', async () => {
    const q = new AdmissionQueue(4);
    let through = false;
    void q.turn().then((open) => (through = open));
    await Promise.resolve();
    expect(through).toBe(true);
    expect(q.length).toBe(0);
  });

  it('lets at most perTurn through per turn of the event loop, in arrival order (generated sizes)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 60 }), async (perTurn, n) => {
        const q = new AdmissionQueue(perTurn);
        const order: number[] = [];
        for (let i = 0; i < n; i++) void q.turn().then(() => order.push(i));
        await Promise.resolve();
        // The turn they arrived in lets the first slice through.
        expect(order.length).toBe(Math.min(n, perTurn));
        let turns = 0;
        while (order.length < n) {
          const before = order.length;
          await nextTurn();
          turns++;
          expect(order.length - before).toBeLessThanOrEqual(perTurn);
          expect(order.length).toBeGreaterThan(before);
        }
        expect(turns).toBe(Math.max(0, Math.ceil(n / perTurn) - 1));
        expect(order).toEqual([...Array(n).keys()]);
        expect(q.length).toBe(0);
      }),
      { numRuns: 40 },
    );
  });

  it('lets go the waiting ones whose client left without using a place in the slice (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.array(fc.boolean(), { maxLength: 50 }), async (perTurn, gone) => {
        const q = new AdmissionQueue(perTurn);
        // The first slice goes through at once; the ones after it wait, some of them leaving meanwhile.
        for (let i = 0; i < perTurn; i++) void q.turn();
        const released: number[] = [];
        const answers: boolean[] = [];
        // Alive when they arrive; the `gone` ones leave while they wait.
        const left = gone.map(() => false);
        gone.forEach(
          (_, i) =>
            void q
              .turn(() => !left[i])
              .then((open) => {
                released.push(i);
                answers.push(open);
              }),
        );
        await Promise.resolve();
        expect(released).toEqual([]);
        gone.forEach((g, i) => (left[i] = g));
        const livePerTurn: number[] = [];
        while (released.length < gone.length) {
          const before = released.length;
          await nextTurn();
          livePerTurn.push(released.slice(before).filter((i) => !gone[i]).length);
        }
        expect(released).toEqual([...gone.keys()]);
        // Let go, not refused: the caller finds the client gone (a `false` would be answered 503 as at shutdown).
        expect(answers.every((open) => open)).toBe(true);
        // A full slice of live ones every turn but the last: the ones that left took no place.
        livePerTurn.slice(0, -1).forEach((live) => expect(live).toBe(perTurn));
        expect(livePerTurn.at(-1) ?? 0).toBeLessThanOrEqual(perTurn);
      }),
      { numRuns: 40 },
    );
  });

  it('answers false to the waiting ones and to later ones once closed (shutdown)', async () => {
    const q = new AdmissionQueue(1);
    const answers = await Promise.all([q.turn(), q.turn(), q.turn(), (q.close(), q.turn())]);
    expect(answers).toEqual([true, false, false, false]);
  });
});
