/**
 * graphql-http's own GraphQL-over-HTTP conformance suite against the running server.
 * Every MUST passes. SHOULDs we fail on purpose, because orderline's contract says so
 * (a rejected document is a 400 whatever the
 * Accept header; invalid variables are the client's 4xx too):
 *   572B  200 on document parsing failure for application/json   -> we answer 400
 *   FDE2  200 on document validation failure for application/json -> we answer 400
 *   7B9B  200 on variable coercion failure for application/json  -> we answer 400
 */
import { auditServer } from 'graphql-http';
import { startTestServer, type TestServer } from '../support/server';

const DELIBERATE = new Set(['572B', 'FDE2', '7B9B']);

describe('graphql-http server audits', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(() => srv.close());

  it('passes every MUST and every SHOULD except the deliberate 400s', async () => {
    const fetchFn = (input: RequestInfo | URL, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${srv.alice.token}`);
      return fetch(input, { ...init, headers });
    };
    const results = await auditServer({ url: `${srv.url}/graphql`, fetchFn });
    expect(results.length).toBeGreaterThan(50);
    const failedMusts = results.filter((r) => r.status === 'error').map((r) => `${r.id} ${r.name}: ${'reason' in r ? r.reason : ''}`);
    expect(failedMusts).toEqual([]);
    const warned = results.filter((r) => r.status === 'warn').map((r) => r.id);
    expect(warned.sort()).toEqual([...DELIBERATE].sort());
  });
});
