import { StoreInputError, StoreUnavailableError } from '../store';
import createError from 'http-errors';
import { isRefusal, refusal, refusalOf, STORE_RETRY_AFTER_S } from './problem';

describe('refusalOf (the error funnel)', () => {
  it('a store input error is the client’s 400, nothing internal', () => {
    const r = refusalOf(new StoreInputError('unstorable_text', 'Text containing U+0000 cannot be stored'));
    expect(r?.problem).toMatchObject({ status: 400, code: 'BAD_REQUEST', detail: 'Text containing U+0000 cannot be stored' });
  });

  it('a user route’s ctx.throw (http-errors) keeps its status, exposed message and fields', () => {
    const r = refusalOf(createError(405, 'not here', { headers: { Allow: 'GET' } }));
    expect(r).toMatchObject({ refused: true, problem: { status: 405, code: 'METHOD_NOT_ALLOWED', detail: 'not here' }, headers: { Allow: 'GET' } });
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

describe('refusalOf: an unreachable store', () => {
  it('is a 503 with Retry-After that names nothing internal', () => {
    const r = refusalOf(new StoreUnavailableError('postgres', { cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' }) }));
    expect(r).toMatchObject({ problem: { status: 503, code: 'SERVICE_UNAVAILABLE' }, headers: { 'Retry-After': String(STORE_RETRY_AFTER_S) } });
    expect(JSON.stringify(r)).not.toMatch(/ECONNREFUSED|10\.0\.0\.5/);
  });
});
