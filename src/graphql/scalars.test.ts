import fc from 'fast-check';
import { buildClientSchema, buildSchema, introspectionFromSchema, Kind, printSchema } from 'graphql';
import { typeDefs } from '../../generated/graphql/schema';
import { createSchema } from './schema';
import { SafeInt } from './scalars';

describe('SafeInt', () => {
  it('serializes and reads exactly the integers within ±(2^53 - 1) (generated)', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        expect(SafeInt.serialize(n)).toBe(n);
        expect(SafeInt.parseValue(n)).toBe(n);
        expect(SafeInt.parseLiteral({ kind: Kind.INT, value: String(n) })).toBe(n);
      }),
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.double().filter((x) => !Number.isSafeInteger(x)),
          fc.string(),
          fc.boolean(),
          fc.constant(null),
          fc.bigInt(),
        ),
        (x) => {
          expect(() => SafeInt.serialize(x)).toThrow(/SafeInt cannot represent/);
          expect(() => SafeInt.parseValue(x)).toThrow(/SafeInt cannot represent/);
        },
      ),
    );
    expect(() => SafeInt.parseLiteral({ kind: Kind.INT, value: '9007199254740992' })).toThrow(/SafeInt cannot represent 9007199254740992/);
    expect(() => SafeInt.parseLiteral({ kind: Kind.FLOAT, value: '1.5' })).toThrow(/integer literal/);
  });
});

describe('the served schema', () => {
  it('is the contract, descriptions included: introspection prints what the SDL prints (custom scalars too)', () => {
    const served = printSchema(buildClientSchema(introspectionFromSchema(createSchema())));
    expect(served).toBe(printSchema(buildSchema(typeDefs)));
  });
});
