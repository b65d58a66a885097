import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, getNullableType, isListType, isObjectType } from 'graphql';
import { DEFAULT_FIRST, MAX_FIRST } from './pageSize';
import { DEFAULT_WEIGHTS } from './costRule';

/** The contract itself, not the generated copy: the constants must say what the contract says. */
const sdl = readFileSync(join(__dirname, '../../contracts/schema.graphql'), 'utf8');
const schema = buildSchema(sdl);

describe("page sizes are the schema's", () => {
  it('the documented default and maximum of `first` are DEFAULT_FIRST and MAX_FIRST', () => {
    const documented = [...sdl.matchAll(/default and cost estimate (\d+), maximum (\d+)/g)];
    expect(documented.length).toBeGreaterThan(0);
    for (const [, def, max] of documented) {
      expect(Number(def)).toBe(DEFAULT_FIRST);
      expect(Number(max)).toBe(MAX_FIRST);
    }
  });

  it("the cost rule's listFactor is the default page size, as the schema's pricing says", () => {
    expect(DEFAULT_WEIGHTS.listFactor).toBe(DEFAULT_FIRST);
    const priced = /`first` argument \(literal or variable\) or else (\d+)/.exec(sdl.replace(/\s+/g, ' '));
    expect(priced).not.toBeNull();
    expect(Number(priced![1])).toBe(DEFAULT_FIRST);
  });

  it('every `first` argument is an Int on a list field (so both bounds apply to it)', () => {
    let seen = 0;
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields())) {
        const first = field.args.find((a) => a.name === 'first');
        if (!first) continue;
        seen++;
        expect([`${type.name}.${field.name}`, String(first.type), isListType(getNullableType(field.type))]).toEqual([`${type.name}.${field.name}`, 'Int', true]);
      }
    }
    expect(seen).toBeGreaterThan(0);
  });
});
