import { checkExtensibleEnums } from './extensibleEnums';

const doc = (codes: string[] | undefined, extra: Record<string, unknown> = {}) => ({
  components: { schemas: { Problem: { properties: { code: { type: 'string', ...(codes ? { 'x-extensible-enum': codes } : {}), ...extra } } } } },
});

describe('x-extensible-enum values of the release stay', () => {
  it('reports each removed value under one cause, at the list', () => {
    const findings = checkExtensibleEnums(doc(['NOT_FOUND', 'CONFLICT', 'GONE']), doc(['CONFLICT', 'LOST']));
    expect(findings.map((f) => f.message.split(':')[0])).toEqual(['removed the value `NOT_FOUND` from its x-extensible-enum', 'removed the value `GONE` from its x-extensible-enum']);
    expect(new Set(findings.map((f) => f.cause))).toEqual(new Set(['`Problem.code` lost enum values']));
    expect(findings[0].pointer).toBe('/components/schemas/Problem/properties/code/x-extensible-enum');
  });

  it('passes added values, and values kept in an `enum` instead', () => {
    expect(checkExtensibleEnums(doc(['A']), doc(['A', 'B']))).toEqual([]);
    expect(checkExtensibleEnums(doc(['A', 'B']), doc(undefined, { enum: ['A', 'B'] }))).toEqual([]);
  });

  it('leaves a value another engine already reported, and a node that went away, to that report', () => {
    expect(checkExtensibleEnums(doc(['A', 'B']), doc(['A']), (v) => v === 'B')).toEqual([]);
    expect(checkExtensibleEnums(doc(['A', 'B']), { components: { schemas: {} } })).toEqual([]);
  });
});
