/**
 * `npm run operations:import -- <client> <manifest.json>`: registers a partner's
 * persisted operations in the allowlist (adding a partner's query shapes means
 * registering them), from the manifest its own tool produced:
 *
 * - Apollo's `apollo-persisted-query-manifest` version 1 (Apollo iOS, Apollo Kotlin,
 *   `@apollo/generate-persisted-query-manifest` for Apollo Client):
 *   `{format, version, operations: [{id, name, type, body}]}`;
 * - Relay's `persisted_queries.json`: `{"<id>": "<text>", ...}`.
 *
 * Each operation is validated against contracts/schema.graphql by the server's own rules
 * (src/graphql/rules.ts, as a production server runs them: graphql-js's, no introspection,
 * the size with fragments written out, depth, cost and the range of `first`, with
 * GRAPHQL_MAX_TOKENS, GRAPHQL_MAX_DEPTH and GRAPHQL_MAX_COST as the server reads them): one
 * refused operation refuses the whole manifest, nothing is written. The
 * client's ids are kept as sent, so its apps change nothing; they must be hex SHA-256
 * (what `extensions.persistedQuery.sha256Hash` carries: Apollo's default; Relay with
 * `persistConfig.algorithm: "SHA256"`). Written as `contracts/operations/<client>/<Name>.graphql`
 * (codegen/operations.ts says how); then `npm run codegen`, and the compatibility gate
 * protects them like ours once released. Files of the client that the new manifest no
 * longer has are left in place: removing one breaks that client's released apps.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildSchema, Kind, parse, validate, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { ID_LINE, readOperationsDir } from '../codegen/operations';
import { parseConfig } from '../src/config';
import { documentRules, variableRules } from '../src/graphql/rules';

export interface ManifestOperation {
  id: string;
  body: string;
}

/** Client folder names: what a path segment and a review can carry safely. */
const CLIENT = /^[a-z0-9][a-z0-9-]{0,62}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The operations of an Apollo (version 1) or Relay manifest; an Error naming what is wrong otherwise. */
export function parseManifest(json: unknown): { format: 'apollo' | 'relay'; operations: ManifestOperation[] } {
  if (json && typeof json === 'object' && !Array.isArray(json)) {
    const m = json as Record<string, unknown>;
    if (m.format === 'apollo-persisted-query-manifest') {
      if (m.version !== 1) throw new Error(`apollo-persisted-query-manifest version ${JSON.stringify(m.version)}: only version 1 is known`);
      if (!Array.isArray(m.operations)) throw new Error('apollo-persisted-query-manifest: `operations` must be a list');
      return {
        format: 'apollo',
        operations: m.operations.map((o: unknown, i) => {
          const { id, body } = (o ?? {}) as Record<string, unknown>;
          if (typeof id !== 'string' || typeof body !== 'string') throw new Error(`apollo-persisted-query-manifest: operations[${i}] needs a string id and body`);
          return { id, body };
        }),
      };
    }
    const entries = Object.entries(m);
    if (entries.length > 0 && entries.every(([, v]) => typeof v === 'string')) return { format: 'relay', operations: entries.map(([id, body]) => ({ id, body: body as string })) };
  }
  throw new Error('not a persisted-query manifest: expected Apollo\'s {"format": "apollo-persisted-query-manifest", "version": 1, ...} or Relay\'s {"<id>": "<query text>"}');
}

export interface ImportResult {
  /** Files written, relative to the root. */
  written: string[];
  /** Why operations were refused (then nothing was written). */
  refused: string[];
}

/** Validates and prices every operation; writes them all, or none. */
export function importManifest(root: string, client: string, manifest: unknown, env: NodeJS.ProcessEnv = process.env): ImportResult {
  if (!CLIENT.test(client)) return { written: [], refused: [`client "${client}": lower-case letters, digits and dashes (a folder name)`] };
  let operations: ManifestOperation[];
  try {
    operations = parseManifest(manifest).operations;
  } catch (err) {
    return { written: [], refused: [(err as Error).message] };
  }
  const config = parseConfig(env);
  if (!config.ok) return { written: [], refused: [config.error] };
  const limits = config.config.graphql;
  const schema: GraphQLSchema = buildSchema(readFileSync(join(root, 'contracts/schema.graphql'), 'utf8'));
  // The allowlist serves production: its rules, and the operation's own variable defaults (no request sends others).
  const rules = [...documentRules(limits, true), ...variableRules(limits)(undefined)];
  const dir = join(root, 'contracts/operations');
  const known = new Map(readOperationsDir(dir).map((o) => [o.hash, o]));

  const refused: string[] = [];
  const files = new Map<string, string>();
  for (const { id, body } of operations) {
    const where = `operation ${id.slice(0, 16)}`;
    if (!SHA256_HEX.test(id)) {
      refused.push(`${where}: the id must be a hex SHA-256 (what extensions.persistedQuery.sha256Hash carries); Relay: set persistConfig.algorithm to "SHA256"`);
      continue;
    }
    let op: OperationDefinitionNode | undefined;
    try {
      const doc = parse(body, { maxTokens: config.config.graphql.maxTokens });
      const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
      op = ops.length === 1 && ops[0].name ? ops[0] : undefined;
      if (!op) {
        refused.push(`${where}: exactly one named operation per entry`);
        continue;
      }
      const errors = validate(schema, doc, rules);
      if (errors.length > 0) {
        refused.push(`${where} (${op.name?.value}): ${errors.map((e) => e.message).join('; ')}`);
        continue;
      }
    } catch (err) {
      refused.push(`${where}: not GraphQL: ${(err as Error).message}`);
      continue;
    }
    const file = `${client}/${op.name?.value}.graphql`;
    const other = known.get(id);
    if (other && (other.client !== client || other.text !== body)) {
      refused.push(`${where}: id already registered for contracts/operations/${other.file}`);
      continue;
    }
    if (files.has(file)) {
      refused.push(`${where}: two operations named ${op.name?.value}`);
      continue;
    }
    files.set(file, `# id: ${id}\n${body}`);
  }
  if (refused.length > 0) return { written: [], refused };
  for (const [file, text] of files) {
    mkdirSync(join(dir, client), { recursive: true });
    // The reader must give back exactly this id and text.
    if (ID_LINE.exec(text)?.[0] === undefined) throw new Error(`internal: ${file} header`);
    writeFileSync(join(dir, file), text);
  }
  return { written: [...files.keys()].map((f) => `contracts/operations/${f}`), refused: [] };
}

if (require.main === module) {
  const [client, file] = process.argv.slice(2);
  if (!client || !file || !existsSync(file)) {
    console.error('usage: npm run operations:import -- <client> <manifest.json>   (Apollo persisted-query manifest v1, or Relay persisted_queries.json)');
    process.exitCode = 2;
  } else {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      console.error(`operations:import: ${file} is not JSON: ${(err as Error).message}`);
      process.exitCode = 2;
    }
    if (process.exitCode !== 2) {
      const result = importManifest(resolve(__dirname, '..'), client, json);
      if (result.refused.length > 0) {
        console.error(`operations:import: refused, nothing written:\n${result.refused.map((r) => `  ${r}`).join('\n')}`);
        process.exitCode = 1;
      } else {
        console.log(`operations:import: ${result.written.length} operations of ${client}:\n${result.written.map((f) => `  ${f}`).join('\n')}\nnow run npm run codegen`);
      }
    }
  }
}
