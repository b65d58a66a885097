import { requestErrorOverWebSocket } from './graphqlErrors';

describe('requestErrorOverWebSocket', () => {
  it('gives a subscription error the status /graphql over HTTP answers its code with; 400 for any other code, or none', () => {
    const status = (code?: string) => requestErrorOverWebSocket([{ message: 'm', ...(code ? { extensions: { code } } : {}) }]).status;
    expect([status('NOT_FOUND'), status('UNAUTHENTICATED'), status('THROTTLED'), status('UNAVAILABLE'), status('INTERNAL_SERVER_ERROR')]).toEqual([404, 401, 429, 503, 500]);
    expect([status('GRAPHQL_VALIDATION_FAILED'), status('BAD_USER_INPUT'), status('PERSISTED_QUERY_NOT_ALLOWED'), status('SOMETHING_NEW'), status()]).toEqual([400, 400, 400, 400, 400]);
    const err = requestErrorOverWebSocket([{ message: 'No such order', extensions: { code: 'NOT_FOUND' } }]);
    expect(err).toMatchObject({ code: 'NOT_FOUND', source: 'graphql' });
    expect(err.message).toBe('HTTP 404 NOT_FOUND: No such order');
  });
});
