import fc from 'fast-check';
import { GRAPHQL_CODES } from './errors';
import { outcomeOf } from './outcome';

describe('outcomeOf', () => {
  it('names a result with data and no errors ok, and an error by its code', () => {
    expect(outcomeOf(200, '{"data":{"viewer":{"id":"u1"}}}')).toBe('ok');
    expect(outcomeOf(400, '{"errors":[{"message":"too costly","extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}')).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(outcomeOf(200, '{"errors":[{"message":"PersistedQueryNotFound","extensions":{"code":"PERSISTED_QUERY_NOT_FOUND"}}]}')).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(outcomeOf(200, '{"errors":[{"message":"boom","path":["viewer"]}],"data":{"viewer":null}}')).toBe('other'); // a partial result
    expect(outcomeOf(500, undefined)).toBe('other');
  });

  it('only ever answers ok, other or one of GRAPHQL_CODES, whatever the body (generated)', () => {
    const allowed = new Set(['ok', 'other', ...Object.values(GRAPHQL_CODES)]);
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 599 }), fc.oneof(fc.string(), fc.json(), fc.constant(undefined)), (status, body) => {
        expect(allowed.has(outcomeOf(status, body))).toBe(true);
      }),
    );
  });
});
