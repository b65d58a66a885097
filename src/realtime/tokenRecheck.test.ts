import fc from 'fast-check';
import { refusal, type Refusal } from '../http';
import { StoreUnavailableError, type Account } from '../store';
import { TokenRecheck } from './tokenRecheck';

const account: Account = { id: 1, name: 'a', pinnedVersion: null };

/** An authentication whose answers the test sets per token, counting the calls. */
function auth(answers: Record<string, 'ok' | 401 | 503 | 'down' | 'bug'>) {
  const calls: string[] = [];
  const fn = (token: string): Promise<Account | Refusal> => {
    calls.push(token);
    const a = answers[token] ?? 'ok';
    if (a === 'down') return Promise.reject(new StoreUnavailableError('sqlite', { cause: new Error('down') }));
    if (a === 'bug') return Promise.reject(new Error('bug'));
    if (a === 401) return Promise.resolve(refusal('UNAUTHORIZED', 'The bearer token is invalid'));
    if (a === 503) return Promise.resolve(refusal('SERVICE_UNAVAILABLE', 'later'));
    return Promise.resolve(account);
  };
  return { fn, calls };
}

describe('TokenRecheck', () => {
  it('ends exactly the streams of tokens now refused 401, asking once per distinct token; store failures and 503 end nothing (generated)', async () => {
    const answer = fc.constantFrom<'ok' | 401 | 503 | 'down' | 'bug'>('ok', 401, 503, 'down', 'bug');
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.stringMatching(/^[a-z]{1,4}$/), answer, { minKeys: 1, maxKeys: 6 }), fc.array(fc.nat(), { minLength: 1, maxLength: 20 }), async (answers, picks) => {
        const tokens = Object.keys(answers);
        const { fn, calls } = auth(answers);
        const errors: unknown[] = [];
        const recheck = new TokenRecheck(fn, 0, (err) => errors.push(err));
        const ended: string[] = [];
        const streams = picks.map((p) => tokens[p % tokens.length]);
        streams.forEach((t, i) => recheck.hold(t, () => ended.push(`${t}#${i}`)));
        const n = await recheck.recheck();
        const refused = streams.map((t, i) => [t, i] as const).filter(([t]) => answers[t] === 401);
        expect(n).toBe(refused.length);
        expect(ended.sort()).toEqual(refused.map(([t, i]) => `${t}#${i}`).sort());
        expect(calls.sort()).toEqual([...new Set(streams)].sort());
        // Only a failure that is no store outage is reported.
        expect(errors).toHaveLength(new Set(streams.filter((t) => answers[t] === 'bug')).size);
        // An ended token is not asked again; the others are.
        calls.length = 0;
        await recheck.recheck();
        expect(calls.sort()).toEqual([...new Set(streams.filter((t) => answers[t] !== 401))].sort());
      }),
      { numRuns: 50 },
    );
  });

  it('forgets a token once its last stream gives its hold back (twice is harmless); one round at a time', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const calls: string[] = [];
    const recheck = new TokenRecheck(async (t) => {
      calls.push(t);
      await gate;
      return account;
    }, 0);
    const a = recheck.hold('x', () => undefined);
    const b = recheck.hold('x', () => undefined);
    expect(recheck.tokens).toBe(1);
    a();
    a();
    expect(recheck.tokens).toBe(1);
    const first = recheck.recheck();
    const second = recheck.recheck();
    expect(second).toBe(first);
    release();
    await first;
    expect(calls).toEqual(['x']);
    b();
    expect(recheck.tokens).toBe(0);
  });
});
