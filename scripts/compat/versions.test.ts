import { checkOperationSunsets, checkVersions } from './versions';

const doc = (versions: Record<string, unknown>[]) => ({ info: { 'x-api-versions': versions } });
const V1 = { version: 1, deprecated: '2026-11-01T00:00:00Z', sunset: '2027-06-30T23:59:59Z' };
const V2 = { version: 2 };

describe('checkVersions (info.x-api-versions)', () => {
  const before = Date.parse('2027-06-01T00:00:00Z');
  const after = Date.parse('2027-07-01T00:00:00Z');

  it('a version removed after its sunset passes; before it, or with none announced, fails', () => {
    expect(checkVersions(doc([V1, V2]), doc([V2]), after)).toEqual([]);
    expect(checkVersions(doc([V1, V2]), doc([V2]), before).map((f) => [f.rule, f.cause])).toEqual([
      ['api-version-removed-before-sunset', 'info.x-api-versions: version 1 removed before its sunset (2027-06-30T23:59:59Z)'],
    ]);
    expect(
      checkVersions(doc([V1, V2]), doc([V1]), after)
        .map((f) => f.rule)
        .sort(),
    ).toEqual(['api-version-newest-changed', 'api-version-removed-before-sunset']);
  });

  it('the newest changed fails; a version added before the newest passes', () => {
    expect(checkVersions(doc([V1, V2]), doc([V2, V1]), before).map((f) => f.rule)).toEqual(['api-version-newest-changed']);
    expect(checkVersions(doc([V1, V2]), doc([V1, { version: 3 }, V2]), before)).toEqual([]);
  });

  it('a sunset that is no date fails, whatever it was', () => {
    expect(checkVersions(doc([V1, V2]), doc([{ ...V1, sunset: 'soon' }, V2]), before).map((f) => f.rule)).toEqual(['api-version-sunset-invalid']);
    expect(checkVersions(doc([V1, V2]), doc([V1, { ...V2, sunset: '2027-13-45' }]), before).map((f) => f.rule)).toEqual(['api-version-sunset-invalid']);
  });

  it('a sunset moved earlier fails; later, added or removed passes', () => {
    expect(checkVersions(doc([V1, V2]), doc([{ ...V1, sunset: '2027-01-01T00:00:00Z' }, V2]), before).map((f) => f.rule)).toEqual(['api-version-sunset-earlier']);
    expect(checkVersions(doc([V1, V2]), doc([{ ...V1, sunset: '2028-01-01T00:00:00Z' }, V2]), before)).toEqual([]);
    expect(checkVersions(doc([V1, V2]), doc([V1, { ...V2, sunset: '2029-01-01T00:00:00Z' }]), before)).toEqual([]);
    expect(checkVersions(doc([V1, V2]), doc([{ version: 1 }, V2]), before)).toEqual([]);
  });
});

describe('checkOperationSunsets', () => {
  const doc = (sunset?: string) => ({ paths: { '/v2/orders': { get: { deprecated: true, ...(sunset ? { 'x-sunset': sunset } : {}) }, post: { 'x-sunset': '2027-01-01' } } } });
  it("fails a deprecated operation's x-sunset moved earlier, naming the operation and its version", () => {
    expect(checkOperationSunsets(doc('2027-12-31'), doc('2026-12-01'))).toEqual([
      expect.objectContaining({
        rule: 'api-operation-sunset-earlier',
        group: 'REST v2',
        location: 'GET /v2/orders',
        message: expect.stringContaining('from 2027-12-31 to 2026-12-01'),
        pointer: '/paths/~1v2~1orders/get/x-sunset',
      }),
    ]);
  });
  it('passes one moved later, added, removed or unchanged', () => {
    for (const [a, b] of [
      ['2027-12-31', '2028-01-01'],
      [undefined, '2026-12-01'],
      ['2027-12-31', undefined],
      ['2027-12-31', '2027-12-31'],
    ] as const)
      expect(checkOperationSunsets(doc(a), doc(b))).toEqual([]);
  });
});
