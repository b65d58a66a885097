import { StoreInputError } from '../store';
import { httpProblem, isRefusal, refusal, refusalOf } from './problem';

describe('refusalOf (the error funnel)', () => {
  it('a store input error is the client’s 400, nothing internal', () => {
    const r = refusalOf(new StoreInputError('unstorable_text', 'Text containing U+0000 cannot be stored'));
    expect(r?.problem).toMatchObject({ status: 400, code: 'BAD_REQUEST', detail: 'Text containing U+0000 cannot be stored' });
  });

  it('a thrown HttpProblem keeps its problem and fields', () => {
    const r = refusalOf(httpProblem('UNAUTHORIZED', 'no', { 'WWW-Authenticate': 'Bearer' }));
    expect(r).toMatchObject({ refused: true, problem: { status: 401, code: 'UNAUTHORIZED' }, headers: { 'WWW-Authenticate': 'Bearer' } });
  });

  it('a library’s client error by status (413 from a body reader) maps to our code; anything else is not the client’s', () => {
    expect(refusalOf(Object.assign(new Error('too big'), { status: 413, expose: true }))?.problem).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE', detail: 'too big' });
    expect(refusalOf(new Error('boom'))).toBeUndefined();
    expect(refusalOf(Object.assign(new Error('db down'), { status: 500 }))).toBeUndefined();
    expect(refusalOf('a string')).toBeUndefined();
  });

  it('isRefusal tells a refusal from a response or an account', () => {
    expect(isRefusal(refusal('NOT_FOUND'))).toBe(true);
    expect(isRefusal({ status: 404, body: {} })).toBe(false);
    expect(isRefusal({ id: 1, name: 'a', pinnedVersion: null })).toBe(false);
  });
});
