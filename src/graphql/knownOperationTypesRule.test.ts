import { buildSchema, parse, validate } from 'graphql';
import { knownOperationTypesRule } from './knownOperationTypesRule';

describe('knownOperationTypesRule', () => {
  const schema = buildSchema('type Query { a: Int } type Subscription { s: Int }');
  const messages = (text: string) => validate(schema, parse(text), [knownOperationTypesRule]).map((e) => e.message);

  it('refuses every operation whose root type the schema lacks, wherever it stands in the document', () => {
    expect(messages('query A { a } mutation B { nope }')).toEqual(['The schema defines no mutation operations']);
    expect(messages('mutation { x } mutation { y }')).toHaveLength(2);
  });
  it('admits operations of the root types the schema has', () => {
    expect(messages('query { a } subscription S { s }')).toEqual([]);
  });
});
