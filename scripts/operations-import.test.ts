/**
 * Partners' persisted operations: imported from the manifests real tools produce, priced
 * and validated, served under the client's own ids in allowlist mode, and protected by
 * the compatibility gate; our allowlist exported as an Apollo manifest that Apollo
 * Client's persisted-query link uses.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { buildSchema, Kind } from 'graphql';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { generatePersistedQueryManifest, type PersistedQueryManifest } from '@apollo/generate-persisted-query-manifest';
import { readOperationsDir, type ApolloManifest } from '../codegen/operations';
import { release } from './release';
import { sha256Hex } from '../src/graphql/persisted';
import { startTestServer, type TestServer } from '../test/support/server';
import { checkOperations } from './compat/operations';
import { importManifest } from './operations-import';

const ROOT = join(__dirname, '..');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** A temp root with this repo's schema and operations (imports write there, never here). */
function tempRoot(): { root: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'orderline-import-'));
  cpSync(join(ROOT, 'contracts/schema.graphql'), join(root, 'contracts/schema.graphql'));
  cpSync(join(ROOT, 'contracts/operations'), join(root, 'contracts/operations'), { recursive: true });
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** What Apollo's own generator makes of our operations, as a web team on Apollo Client would run it. */
async function apolloToolManifest(): Promise<PersistedQueryManifest> {
  return generatePersistedQueryManifest({ documents: [join(ROOT, 'contracts/operations/*.graphql')] }, undefined);
}

/** A Relay compiler's persisted_queries.json (`persistConfig.algorithm: "SHA256"`): id -> text as Relay prints it. */
const RELAY_TEXT = 'query UserNameQuery(\n  $id: ID!\n) {\n  user(id: $id) {\n    name\n    id\n  }\n}\n';
const relayManifest = { [sha256(RELAY_TEXT)]: RELAY_TEXT };

describe('npm run operations:import', () => {
  let tool: PersistedQueryManifest;
  beforeAll(async () => {
    tool = await apolloToolManifest();
  }, 60_000);

  it("imports @apollo/generate-persisted-query-manifest's output with the client's ids kept as sent", () => {
    const { root, cleanup } = tempRoot();
    try {
      const result = importManifest(root, 'web', tool, {});
      expect(result.refused).toEqual([]);
      expect(result.written.sort()).toEqual(tool.operations.map((o) => `contracts/operations/web/${o.name}.graphql`).sort());
      const partners = readOperationsDir(join(root, 'contracts/operations')).filter((o) => o.client === 'web');
      expect(partners.map((o) => [o.hash, o.text]).sort()).toEqual(tool.operations.map((o) => [o.id, o.body]).sort());
      // Apollo's ids hash its own text (with __typename), not ours: only the import makes them known.
      const ours = new Set(readOperationsDir(join(ROOT, 'contracts/operations')).map((o) => o.hash));
      for (const o of tool.operations) {
        expect(o.id).toBe(sha256(o.body));
        expect(ours.has(o.id)).toBe(false);
      }
    } finally {
      cleanup();
    }
  });

  it('imports a Relay persisted_queries.json, the text byte for byte', () => {
    const { root, cleanup } = tempRoot();
    try {
      expect(importManifest(root, 'android', relayManifest, {})).toEqual({ written: ['contracts/operations/android/UserNameQuery.graphql'], refused: [] });
      expect(readFileSync(join(root, 'contracts/operations/android/UserNameQuery.graphql'), 'utf8')).toBe(`# id: ${sha256(RELAY_TEXT)}\n${RELAY_TEXT}`);
    } finally {
      cleanup();
    }
  });

  it('refuses the whole manifest, writing nothing, for an operation over the cost ceiling, invalid, refused in production, or with an id clients cannot send', () => {
    const { root, cleanup } = tempRoot();
    try {
      const expensive = 'query Deep($id: ID!) { user(id: $id) { friends { friends { friends { name } } } } }';
      const invalid = 'query Nope { user(id: "1") { shoeSize } }';
      const md5 = 'query Fine($id: ID!) { user(id: $id) { name } }';
      const wide = 'query Wide { user(id: "u1") { friends(first: 101) { id } } }';
      const introspect = 'query Types { __schema { types { name } } }';
      const manifest = {
        format: 'apollo-persisted-query-manifest',
        version: 1,
        operations: [
          tool.operations[0],
          { id: sha256(expensive), name: 'Deep', type: 'query', body: expensive },
          { id: sha256(invalid), name: 'Nope', type: 'query', body: invalid },
          { id: 'd41d8cd98f00b204e9800998ecf8427e', name: 'Fine', type: 'query', body: md5 },
          { id: sha256(wide), name: 'Wide', type: 'query', body: wide },
          { id: sha256(introspect), name: 'Types', type: 'query', body: introspect },
        ],
      };
      const result = importManifest(root, 'ios', manifest, {});
      expect(result.written).toEqual([]);
      expect(result.refused).toEqual([
        expect.stringMatching(/\(Deep\): 'Deep' costs more than the cost ceiling allows/),
        expect.stringMatching(/\(Nope\): Cannot query field "shoeSize" on type "User"/),
        expect.stringMatching(/d41d8cd98f00b204: the id must be a hex SHA-256/),
        // What a production server refuses too: `first` out of its range, introspection.
        expect.stringMatching(/\(Wide\): 'first' must be between 0 and 100, got 101/),
        expect.stringMatching(/\(Types\): GraphQL introspection has been disabled/),
      ]);
      expect(readOperationsDir(join(root, 'contracts/operations')).some((o) => o.client === 'ios')).toBe(false);
      // The ceiling is the server's: GRAPHQL_MAX_COST raised, the same query is admitted.
      expect(importManifest(root, 'ios', { [sha256(expensive)]: expensive }, { GRAPHQL_MAX_COST: '5000' }).refused).toEqual([]);
      expect(importManifest(root, 'web', { format: 'apollo-persisted-query-manifest', version: 2, operations: [] }, {}).refused).toEqual(['apollo-persisted-query-manifest version 2: only version 1 is known']);
    } finally {
      cleanup();
    }
  });

  it("the compatibility gate protects a partner's released operations like ours (npm run release snapshots them)", () => {
    const { root, cleanup } = tempRoot();
    const released = join(root, 'contracts/released/operations');
    try {
      importManifest(root, 'android', relayManifest, {});
      for (const f of ['openapi.yaml', 'asyncapi.yaml']) cpSync(join(ROOT, 'contracts', f), join(root, 'contracts', f));
      expect(release(root)).toContain('contracts/released/operations/android/UserNameQuery.graphql');
      const schema = buildSchema(readFileSync(join(root, 'contracts/schema.graphql'), 'utf8'));
      expect(checkOperations(join(root, 'contracts/operations'), released, schema).findings).toEqual([]);
      rmSync(join(root, 'contracts/operations/android/UserNameQuery.graphql'));
      const removed = checkOperations(join(root, 'contracts/operations'), released, schema).findings;
      expect(removed).toEqual([expect.objectContaining({ rule: 'operation-removed', location: expect.stringContaining('UserNameQuery (android/UserNameQuery.graphql') })]);
      // Its text edited under the same id: the app would get other fields for the id it sends.
      writeFileSync(join(root, 'contracts/operations/android/UserNameQuery.graphql'), `# id: ${sha256(RELAY_TEXT)}\n${RELAY_TEXT.replace('name', 'id name')}`);
      expect(checkOperations(join(root, 'contracts/operations'), released, schema).findings).toEqual([
        expect.objectContaining({ rule: 'operation-changed', message: expect.stringContaining('changed under the same id') }),
      ]);
      // Its text reprinted by a formatter: a new id, so the app's id is gone.
      writeFileSync(join(root, 'contracts/operations/android/UserNameQuery.graphql'), `# id: ${'0'.repeat(64)}\n${RELAY_TEXT}`);
      expect(checkOperations(join(root, 'contracts/operations'), released, schema).findings.map((f) => f.rule)).toEqual(['operation-changed']);
    } finally {
      cleanup();
    }
  });
});

describe('allowlist mode with partners and the exported manifest', () => {
  let srv: TestServer;
  let token: string;
  let tool: PersistedQueryManifest;
  beforeAll(async () => {
    tool = await apolloToolManifest();
    const { root, cleanup } = tempRoot();
    try {
      expect(importManifest(root, 'web', tool, {}).refused).toEqual([]);
      const manifest = Object.fromEntries(readOperationsDir(join(root, 'contracts/operations')).map((o) => [o.hash, o.text]));
      srv = await startTestServer({ GRAPHQL_PERSISTED: 'allowlist' }, { manifest });
    } finally {
      cleanup();
    }
    await srv.store.seedDemo();
    token = await srv.tokenFor('demo');
  }, 60_000);
  afterAll(() => srv?.close());

  const sent: { hash?: string; hasQuery: boolean }[] = [];
  const recording: typeof fetch = async (input, init = {}) => {
    const body = typeof init.body === 'string' ? (JSON.parse(init.body) as { query?: string; extensions?: { persistedQuery?: { sha256Hash?: string } } }) : undefined;
    sent.push({ hash: body?.extensions?.persistedQuery?.sha256Hash, hasQuery: typeof body?.query === 'string' });
    return fetch(input, init);
  };
  const apollo = (link: PersistedQueryLink) =>
    new ApolloClient({ link: link.concat(new HttpLink({ uri: `${srv.url}/graphql`, fetch: recording, headers: { authorization: `Bearer ${token}` } })), cache: new InMemoryCache() });

  it("serves Apollo Client as it is: it sends its own SHA-256, which the partner's imported manifest registered", async () => {
    sent.length = 0;
    const { data } = await apollo(new PersistedQueryLink({ sha256 })).query({ query: gql(readFileSync(join(ROOT, 'contracts/operations/User.graphql'), 'utf8')), variables: { id: 'u3' }, fetchPolicy: 'network-only' });
    expect(data).toEqual({ user: { __typename: 'User', id: 'u3', name: 'Chen' } });
    expect(sent).toEqual([{ hash: tool.operations.find((o) => o.name === 'User')?.id, hasQuery: false }]);
  });

  it("serves our exported manifest's ids (generated/graphql/persisted-query-manifest.json) through the persisted-query link", async () => {
    const exported = JSON.parse(readFileSync(join(ROOT, 'generated/graphql/persisted-query-manifest.json'), 'utf8')) as ApolloManifest;
    expect(exported).toMatchObject({ format: 'apollo-persisted-query-manifest', version: 1 });
    for (const o of exported.operations) expect(o.id).toBe(sha256Hex(o.body));
    const ids = new Map(exported.operations.map((o) => [o.name, o.id]));
    sent.length = 0;
    // Apollo's documented way: generateHash looks the operation up in the manifest by name.
    const link = new PersistedQueryLink({
      generateHash: (doc) => {
        const def = doc.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
        return ids.get(def && 'name' in def ? (def.name?.value ?? '') : '') ?? '';
      },
    });
    const response = await apollo(link).query({ query: gql(readFileSync(join(ROOT, 'contracts/operations/Order.graphql'), 'utf8')), variables: { id: '1' }, fetchPolicy: 'network-only', errorPolicy: 'all' });
    expect(sent).toEqual([{ hash: ids.get('Order'), hasQuery: false }]);
    expect(response.error).toBeUndefined();
  });
});
