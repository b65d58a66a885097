import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSchema } from 'graphql';
import { checkOperations, readOperationsDir } from './operations';

const CONTRACTS = join(__dirname, '..', '..', 'contracts');
const schema = () => buildSchema(readFileSync(join(CONTRACTS, 'schema.graphql'), 'utf8'));

describe('readOperationsDir', () => {
  it('hashes each operation as the persisted manifest codegen wrote (generated/graphql/persisted.json)', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'generated', 'graphql', 'persisted.json'), 'utf8')) as Record<string, string>;
    const ops = readOperationsDir(join(CONTRACTS, 'operations'));
    expect(ops.map((o) => o.hash).sort()).toEqual(Object.keys(manifest).sort());
    for (const o of ops) expect(manifest[o.hash]).toBe(o.text);
  });
});

describe('checkOperations', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'operations-test-'));
    cpSync(join(CONTRACTS, 'operations'), dir, { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('passes the released operations against themselves, a renamed file and a new one', () => {
    renameSync(join(dir, 'User.graphql'), join(dir, 'UserById.graphql'));
    writeFileSync(join(dir, 'Viewer.graphql'), 'query Viewer {\n  viewer {\n    id\n  }\n}\n');
    const r = checkOperations(dir, join(CONTRACTS, 'operations'), schema());
    expect(r.findings).toEqual([]);
    const released = readOperationsDir(join(CONTRACTS, 'operations')).length; // the contract's own, here standing in for a release
    expect(r.checked).toBe(`${released} released operations, ${released + 1} current`);
  });
  it('fails a removed and a changed released operation, naming file and hash', () => {
    unlinkSync(join(dir, 'User.graphql'));
    writeFileSync(join(dir, 'Order.graphql'), 'query Order($id: ID!) {\n  order(id: $id) {\n    id\n  }\n}\n');
    const r = checkOperations(dir, join(CONTRACTS, 'operations'), schema());
    expect(r.findings.map((f) => [f.rule, f.location.replace(/sha256 \w+/, 'sha256 …')])).toEqual([
      ['operation-changed', 'operation Order (Order.graphql, sha256 …)'],
      ['operation-removed', 'operation User (User.graphql, sha256 …)'],
    ]);
  });
  it("passes a partner's operation reformatted under its id, and fails one whose selection changed", () => {
    const released = mkdtempSync(join(tmpdir(), 'operations-released-'));
    try {
      cpSync(join(CONTRACTS, 'operations'), released, { recursive: true });
      for (const d of [released, dir]) {
        mkdirSync(join(d, 'ios'));
        writeFileSync(join(d, 'ios', 'Order.graphql'), '# id: ios-order-1\nquery IosOrder($id: ID!) { order(id: $id) { id status } }\n');
      }
      writeFileSync(join(dir, 'ios', 'Order.graphql'), "# id: ios-order-1\n# the iOS app's order screen\nquery IosOrder( $id : ID! ) {\n  order(id: $id) {\n    id\n    status\n  }\n}\n");
      expect(checkOperations(dir, released, schema()).findings).toEqual([]);
      writeFileSync(join(dir, 'ios', 'Order.graphql'), '# id: ios-order-1\nquery IosOrder($id: ID!) { order(id: $id) { id } }\n');
      expect(checkOperations(dir, released, schema()).findings).toMatchObject([{ rule: 'operation-changed', message: expect.stringContaining('changed under the same id') }]);
      // Its id line edited, the text kept: the id is what changed.
      writeFileSync(join(dir, 'ios', 'Order.graphql'), '# id: ios-order-2\nquery IosOrder($id: ID!) { order(id: $id) { id status } }\n');
      expect(checkOperations(dir, released, schema()).findings).toMatchObject([{ rule: 'operation-changed', message: expect.stringMatching(/^its id changed to ios-order-2 with the same text/) }]);
    } finally {
      rmSync(released, { recursive: true, force: true });
    }
  });
  it('lists an error once per operation, however often the operation meets it', () => {
    const sdl = readFileSync(join(CONTRACTS, 'schema.graphql'), 'utf8').replace('friends(first: Int)', 'friends(first: SafeInt)');
    const r = checkOperations(dir, join(CONTRACTS, 'operations'), buildSchema(sdl));
    const mine = r.findings.filter((f) => f.location.includes('FriendsOfFriends '));
    expect(mine).toHaveLength(1);
    expect(mine[0].message).toContain('Variable "$first" of type "Int" used in position expecting type "SafeInt"');
  });
  it('fails a released operation the new schema no longer validates', () => {
    const sdl = readFileSync(join(CONTRACTS, 'schema.graphql'), 'utf8').replace(/\n\s*"[^"\n]*"\n\s*viewer: User\n/, '\n');
    const r = checkOperations(dir, join(CONTRACTS, 'operations'), buildSchema(sdl));
    expect(r.findings).toMatchObject([
      { rule: 'operation-invalid', location: expect.stringContaining('ViewerOrders ') },
      { rule: 'operation-invalid', location: expect.stringContaining('ViewerOrdersV2 ') },
    ]);
    expect(r.findings[0].message).toContain('viewer');
  });
});
