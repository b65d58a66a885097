import { orderScenarios, ROW_ORDER, scaledScenario } from './realtime/rows';
import { clientFds, FD_SPARE } from './realtime/settings';

describe('realtime rows at a subscriber count', () => {
  it('keys a row by its base scenario at the default count, and adds the count otherwise', () => {
    expect(scaledScenario('ws-fanout-cpu-peer', 2000, 2000)).toBe('ws-fanout-cpu-peer');
    expect(scaledScenario('sse-fanout-cpu-floor', 10000, 2000)).toBe('sse-fanout-cpu-floor-10000');
  });

  it('puts a scaled row right after its base row, by count, and unknown rows last in their order', () => {
    const names = ['zz-other', 'sse-fanout-cpu-floor-10000', 'ws-fanout-cpu-peer-10000', 'sse-fanout-cpu-floor', 'aa-other', 'ws-fanout-cpu-peer-500', 'ws-fanout-cpu-peer', 'ws-idle-memory'];
    expect(orderScenarios(names)).toEqual(['ws-idle-memory', 'ws-fanout-cpu-peer', 'ws-fanout-cpu-peer-500', 'ws-fanout-cpu-peer-10000', 'sse-fanout-cpu-floor', 'sse-fanout-cpu-floor-10000', 'zz-other', 'aa-other']);
    expect(orderScenarios([...ROW_ORDER].reverse())).toEqual(ROW_ORDER);
  });

  it('tells a scaled key from a base key that only looks like one', () => {
    // ws-fanout-cpu-peer-batched is a base key of its own, not ws-fanout-cpu-peer at a count.
    expect(orderScenarios(['ws-fanout-cpu-peer-batched', 'ws-fanout-cpu-peer-10000', 'ws-fanout-cpu-peer'])).toEqual(['ws-fanout-cpu-peer', 'ws-fanout-cpu-peer-10000', 'ws-fanout-cpu-peer-batched']);
  });
});

describe('client processes under ulimit -n', () => {
  it('fits 5 sides of 2000 in 2 processes, and asks for 3 at 10000 under 20000', () => {
    expect(clientFds(5 * 2000 + 1, 2, 20000)).toEqual({ perProc: 5001 + FD_SPARE, ok: true, minProcs: 1 });
    const at10k = clientFds(5 * 10000 + 1, 2, 20000);
    expect(at10k.ok).toBe(false);
    expect(at10k.minProcs).toBe(3);
    expect(clientFds(5 * 10000 + 1, 3, 20000).ok).toBe(true);
  });

  it('takes an unknown limit as enough, and a limit below the spare as never enough', () => {
    expect(clientFds(50000, 1, undefined).ok).toBe(true);
    expect(clientFds(10, 1, FD_SPARE)).toMatchObject({ ok: false, minProcs: Infinity });
  });
});
