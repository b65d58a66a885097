import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkGraphql } from './graphql';
import { GateError } from './types';

const SDL = 'type Query {\n  user(id: ID!): User\n}\n\ntype User {\n  id: ID!\n  name: String!\n  friends(first: Int): [User!]!\n}\n';
const none = { graphql: [] };

describe('checkGraphql', () => {
  it('passes the same schema and additive changes', async () => {
    expect((await checkGraphql(SDL, SDL, none)).findings).toEqual([]);
    const added = SDL.replace('name: String!', 'name: String!\n  email: String').concat('type Extra {\n  id: ID!\n}\n');
    expect((await checkGraphql(added, SDL, none)).findings).toEqual([]);
  });
  it('passes a nullable argument without default on an existing field (the inspector says DANGEROUS)', async () => {
    const r = await checkGraphql(SDL.replace('friends(first: Int)', 'friends(first: Int, after: String)'), SDL, none);
    expect(r.findings).toEqual([]);
  });
  it('fails a nullable argument with a default: old queries now run with it', async () => {
    const r = await checkGraphql(SDL.replace('friends(first: Int)', 'friends(first: Int, after: String = "x")'), SDL, none);
    expect(r.findings).toMatchObject([{ kind: 'graphql', location: 'User.friends.after' }]);
  });
  it('fails a removed field, naming it', async () => {
    const r = await checkGraphql(SDL.replace('  name: String!\n', ''), SDL, none);
    expect(r.findings).toMatchObject([{ kind: 'graphql', group: 'breaking', location: 'User.name', rule: 'FIELD_REMOVED BREAKING' }]);
    expect(r.findings[0].message).toContain("'name'");
  });
  it('lets a DANGEROUS change through when accepted (path and message), with a note giving the reason', async () => {
    const changed = SDL.replace('friends(first: Int)', 'friends(first: Int = 10)');
    const message = "Default value '10' was added to argument 'first' on field 'User.friends'";
    const failing = await checkGraphql(changed, SDL, none);
    expect(failing.findings).toMatchObject([{ location: 'User.friends.first', message }]);
    const ok = await checkGraphql(changed, SDL, { graphql: [{ path: 'User.friends.first', message, reason: 'reviewed' }] });
    expect(ok.findings).toEqual([]);
    expect(ok.notes).toEqual([expect.stringContaining('reason: reviewed')]);
  });
  it('never accepts a BREAKING change, and notes accepted entries that match nothing', async () => {
    const message = "Field 'name' was removed from object type 'User'";
    const r = await checkGraphql(SDL.replace('  name: String!\n', ''), SDL, { graphql: [{ path: 'User.name', message, reason: 'no' }] });
    expect(r.findings).toHaveLength(1);
    expect(r.notes).toEqual([expect.stringContaining('matches no change')]);
  });
  it('reports an unparsable schema as a GateError', async () => {
    await expect(checkGraphql('type Query {', SDL, none)).rejects.toThrow(GateError);
  });

  it('reports a schema that parses but breaks a type-system rule as a GateError naming the rule, not a later stack trace', async () => {
    const broken = `${SDL}\ninterface Named {\n  name: String!\n}\n\ntype Pet implements Named {\n  id: ID!\n}\n`;
    await expect(checkGraphql(broken, SDL, none)).rejects.toThrow(new GateError('graphql: contracts/schema.graphql is not a valid schema: Interface field Named.name expected but Pet does not provide it.'));
  });

  describe('the subscription of contracts/schema.graphql, once released', () => {
    const current = readFileSync(join(__dirname, '../../contracts/schema.graphql'), 'utf8');
    it('is guarded like every other field: removing orderEvents, its since argument or OrderEvent.seq is breaking', async () => {
      expect((await checkGraphql(current, current, none)).findings).toEqual([]);
      const removedField = current.replace(/\n {2}orderEvents\(id: ID!, since: Int\): OrderEvent!\n/, '\n  orderEventsV2(id: ID!): OrderEvent!\n');
      expect((await checkGraphql(removedField, current, none)).findings).toMatchObject([{ location: 'Subscription.orderEvents', rule: 'FIELD_REMOVED BREAKING' }]);
      const removedArg = current.replace('orderEvents(id: ID!, since: Int)', 'orderEvents(id: ID!)');
      expect((await checkGraphql(removedArg, current, none)).findings).toMatchObject([{ location: 'Subscription.orderEvents.since' }]);
      const removedSeq = current.replace(/\n {2}seq: Int!\n/, '\n  position: Int!\n');
      expect((await checkGraphql(removedSeq, current, none)).findings).toMatchObject([{ location: 'OrderEvent.seq', group: 'breaking' }]);
    });
  });
});
