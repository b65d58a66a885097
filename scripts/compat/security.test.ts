import { checkAsyncApiSecurity, checkOpenApiSecurity, refusedAlternatives, schemeChanges } from './security';

const api = (security: unknown, opSecurity?: unknown, schemes: Record<string, unknown> = { bearerAuth: { type: 'http', scheme: 'bearer' } }) => ({
  security,
  components: { securitySchemes: schemes },
  paths: { '/healthz': { get: opSecurity === undefined ? {} : { security: opSecurity } } },
});

describe('security (what a released client could authenticate with)', () => {
  it('alternatives: an added one or a dropped scope passes; a removed one, an added scheme or scope fails', () => {
    const same = () => true;
    expect(refusedAlternatives([{ a: [] }], [{ a: [] }, { b: [] }], same)).toEqual([]);
    expect(refusedAlternatives([{ a: ['x', 'y'] }], [{ a: ['x'] }], same)).toEqual([]);
    expect(refusedAlternatives([{ a: [] }, { b: [] }], [{ a: [] }], same)).toEqual([{ b: [] }]);
    expect(refusedAlternatives([{ a: [] }], [{ a: [], b: [] }], same)).toEqual([{ a: [] }]);
    expect(refusedAlternatives([{ a: [] }], [{ a: ['x'] }], same)).toEqual([{ a: [] }]);
    expect(refusedAlternatives([], [{ a: [] }], same)).toEqual([{}]);
    expect(refusedAlternatives([{ a: [] }], [], same)).toEqual([]);
  });

  it("an HTTP scheme's name is case-insensitive; its type or an API key's name is not", () => {
    expect(schemeChanges({ type: 'http', scheme: 'bearer' }, { type: 'http', scheme: 'Bearer' })).toEqual([]);
    expect(schemeChanges({ type: 'apiKey', in: 'query', name: 'access_token' }, { type: 'apiKey', in: 'query', name: 'token' })).toEqual(['name: "access_token" -> "token"']);
  });

  it("an operation's own `security: []` dropped (the document's requirement now applies) is blamed on the operation", () => {
    const [f] = checkOpenApiSecurity(api([{ bearerAuth: [] }], []), api([{ bearerAuth: [] }]));
    expect(f).toMatchObject({ location: 'GET /healthz', rule: 'security-tightened', cause: expect.stringContaining('security of GET /healthz removed'), pointer: '/paths/~1healthz/get' });
  });

  it('AsyncAPI: a scope added to the referenced scheme object fails', () => {
    const doc = (scopes: string[]) => ({
      components: { securitySchemes: { oauth: { type: 'oauth2', scopes } } },
      operations: { receive: { security: [{ $ref: '#/components/securitySchemes/oauth' }] } },
    });
    expect(checkAsyncApiSecurity(doc(['read']), doc(['read']))).toEqual([]);
    expect(checkAsyncApiSecurity(doc(['read']), doc(['read', 'write'])).map((f) => f.rule)).toEqual(['security-tightened']);
    expect(checkAsyncApiSecurity(doc(['read', 'write']), doc(['read']))).toEqual([]);
  });
});
