import fc from 'fast-check';
import { oneLine, REACH_RETRY_MAX_MS, untilReachable } from './startup';

describe('untilReachable', () => {
  it('tries again after 1 s, doubling up to REACH_RETRY_MAX_MS, telling of each failure, until the dependency answers', async () => {
    const waits: number[] = [];
    const told: string[] = [];
    let calls = 0;
    const value = await untilReachable(
      'REDIS_URL',
      async () => {
        if (++calls <= 7) throw new Error(`down ${calls}`);
        return 'open';
      },
      { onRetry: (what, err, delayMs) => told.push(`${what}: ${(err as Error).message} (${delayMs})`), sleep: async (ms) => void waits.push(ms) },
    );
    expect(value).toBe('open');
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, REACH_RETRY_MAX_MS, REACH_RETRY_MAX_MS]);
    expect(told[0]).toBe('REDIS_URL: down 1 (1000)');
    expect(told).toHaveLength(7);
  });
});

describe('oneLine: a refusal stays one line whatever a driver or a value put in it', () => {
  it('writes every control character as its escape and leaves the rest (generated)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const line = oneLine(text);
        // eslint-disable-next-line no-control-regex -- control characters are what must not be left
        expect(/[\u0000-\u001f\u007f]/.test(line)).toBe(false);
        expect(oneLine(text.replace(/[\u0000-\u001f\u007f]/g, ''))).toBe(text.replace(/[\u0000-\u001f\u007f]/g, '')); // eslint-disable-line no-control-regex -- as above
      }),
    );
    expect(oneLine('connect ECONNREFUSED\n  at x\t\u007f')).toBe('connect ECONNREFUSED\\n  at x\\t\\u007f');
  });
});
