/**
 * Persisted GraphQL operations: contracts/operations/*.graphql against the released
 * ones.
 *
 * Released clients send an operation by its hash, the hex SHA-256 of graphql-js's
 * `print(parse(file))` (codegen/graphql.ts `readOperations` builds the manifest so; the
 * server hashes with src/graphql/persisted.ts `sha256Hex`, used here too; codegen's
 * module is not imported: jest cannot load its ESM-only @graphql-codegen plugins). So every released hash must still be in the manifest: removing or
 * editing a released operation file breaks the clients that send it. A renamed file
 * with the same text keeps its hash and passes; a new file passes.
 *
 * Each released operation must also still validate against the new schema (graphql
 * `validate`): the schema check names the removed field, this one names the
 * released operations that stop working.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kind, parse, print, validate, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { sha256Hex } from '../../src/graphql/persisted';
import { GateError, type Finding, type KindResult } from './types';

export interface Operation {
  file: string;
  name: string;
  hash: string;
  text: string;
}

/** The operations of one `operations/` folder, hashed as codegen hashes them. */
export function readOperationsDir(dir: string): Operation[] {
  if (!existsSync(dir)) throw new GateError(`operations: ${dir} is missing`);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((file) => {
      let text: string;
      let name: string | undefined;
      try {
        const doc = parse(readFileSync(join(dir, file), 'utf8'));
        name = doc.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)?.name?.value;
        text = print(doc);
      } catch (err) {
        throw new GateError(`operations: ${join(dir, file)} is not GraphQL: ${(err as Error).message}`);
      }
      return { file, name: name ?? file, hash: sha256Hex(text), text };
    });
}

export function checkOperations(currentDir: string, releasedDir: string, schema: GraphQLSchema): KindResult {
  const current = readOperationsDir(currentDir);
  const released = readOperationsDir(releasedDir);
  const hashes = new Set(current.map((o) => o.hash));
  const findings: Finding[] = [];
  for (const op of released) {
    const location = `operation ${op.name} (${op.file}, sha256 ${op.hash.slice(0, 12)})`;
    if (!hashes.has(op.hash)) {
      const renamed = current.find((o) => o.name === op.name || o.file === op.file);
      findings.push({
        kind: 'operations',
        group: 'persisted operations',
        location,
        message: renamed
          ? `changed: its text now hashes to ${renamed.hash.slice(0, 12)}, so released clients sending ${op.hash.slice(0, 12)} get PERSISTED_QUERY_NOT_FOUND (add the new text as a new operation file, keep the old one)`
          : 'removed: released clients still send its hash',
        rule: renamed ? 'operation-changed' : 'operation-removed',
        contract: `contracts/operations/${op.file}`,
      });
    }
    for (const error of validate(schema, parse(op.text))) {
      // A field the schema lost: the same change the schema check reports, so the same cause.
      const lost = /^Cannot query field "([^"]+)" on type "([^"]+)"/.exec(error.message);
      findings.push({
        ...(lost ? { cause: `\`${lost[2]}.${lost[1]}\` removed`, contract: 'contracts/schema.graphql' } : { contract: `contracts/operations/${op.file}` }),
        kind: 'operations',
        group: 'released operations against the new schema',
        location,
        message: `no longer valid: ${error.message}`,
        rule: 'operation-invalid',
      });
    }
  }
  return { kind: 'operations', findings, checked: `${released.length} released operations, ${current.length} current`, notes: [] };
}
