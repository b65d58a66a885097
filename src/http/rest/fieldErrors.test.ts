import * as v from '../../../generated/openapi/validators';
import * as p from '../../../generated/openapi/params';
import { fieldErrors } from './fieldErrors';

const errorsOf = (validate: { (x: unknown): boolean; errors?: unknown }, body: unknown) => {
  expect(validate(body)).toBe(false);
  return fieldErrors('body', validate.errors as never);
};

describe('validation errors as one list', () => {
  it('names the member that must not be there, once, even when both versions refuse it', () => {
    expect(errorsOf(v.createOrderBody0, { colour: 'red' })).toEqual([{ pointer: '/colour', rule: 'additionalProperties', message: 'must NOT have additional properties' }]);
  });
  it('names each missing member by its own pointer', () => {
    expect(errorsOf(v.OrderCreateV2, { items: [{ sku: 'A' }] })).toEqual([
      { pointer: '/items/0/quantity', rule: 'required', message: "must have required property 'quantity'" },
      { pointer: '/items/0/unit_price_cents', rule: 'required', message: "must have required property 'unit_price_cents'" },
    ]);
  });
  it('drops the null branch of a nullable member and the oneOf summary', () => {
    expect(errorsOf(v.OrderCreateV2, { discount: { code: 'x' } })).toEqual([{ pointer: '/discount/percent', rule: 'required', message: "must have required property 'percent'" }]);
  });
  it('escapes member names as RFC 6901 says', () => {
    expect(errorsOf(v.OrderCreateV2, { 'a/b~c': 1 })[0].pointer).toBe('/a~1b~0c');
  });
  it('says what an entity-tag list is, not its regular expression, for a malformed If-Match or If-None-Match (as the writes without tags do)', () => {
    expect(p.cancelOrderV2Header({ 'If-Match': 'garbage', 'If-None-Match': 'W/x' })).toBe(false);
    const [ifMatch, ifNoneMatch] = [fieldErrors('header', p.cancelOrderV2Header.errors), (p.cancelOrderV2Header({ 'If-None-Match': 'W/x' }), fieldErrors('header', p.cancelOrderV2Header.errors))];
    expect(ifMatch[0]).toEqual({ pointer: 'header:If-Match', rule: 'entity-tag', message: 'must be * or a comma-separated list of quoted entity tags (RFC 9110 8.8.3)' });
    expect(ifNoneMatch[0]).toEqual({ pointer: 'header:If-None-Match', rule: 'entity-tag', message: 'must be * or a comma-separated list of quoted entity tags (RFC 9110 8.8.3)' });
  });
  it('names parameters by location and name', () => {
    expect(p.listOrdersQuery({ limit: 0 })).toBe(false);
    expect(fieldErrors('query', p.listOrdersQuery.errors)).toEqual([{ pointer: 'query:limit', rule: 'minimum', message: 'must be >= 1' }]);
  });
});
