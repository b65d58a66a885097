/**
 * Persisted GraphQL operations: contracts/operations/ against the released ones.
 *
 * Released clients send an operation by its id: for ours the hex SHA-256 of graphql-js's
 * `print(parse(file))`, for a partner's (`operations/<client>/`, registered by `npm run
 * operations:import`) the id its own tool made. Both are read by codegen/operations.ts,
 * the reader codegen builds the manifest with (that module loads no @graphql-codegen
 * plugin, so jest can import it). So every released id must still be in the manifest:
 * removing or editing a released operation breaks the clients that send it. A renamed
 * file with the same text keeps its hash and passes; a new file passes.
 *
 * Each released operation, ours or a partner's, must also still validate against the
 * new schema (graphql `validate`): the schema check names the removed field, this one
 * names the released operations that stop working.
 */
import { parse, print, validate, type GraphQLSchema } from 'graphql';
import { OperationsError, readOperationsDir as readDir, type PersistedOperation } from '../../codegen/operations';
import { GateError, type Finding, type KindResult } from './types';

export type Operation = PersistedOperation;

/** The operations of one `operations/` folder (ours and partners'), as codegen reads them. */
export function readOperationsDir(dir: string): Operation[] {
  try {
    return readDir(dir);
  } catch (err) {
    if (err instanceof OperationsError) throw new GateError(`operations: ${err.message}`);
    throw err;
  }
}

export function checkOperations(currentDir: string, releasedDir: string, schema: GraphQLSchema): KindResult {
  const current = readOperationsDir(currentDir);
  const released = readOperationsDir(releasedDir);
  const byHash = new Map(current.map((o) => [o.hash, o]));
  const findings: Finding[] = [];
  for (const op of released) {
    const location = `operation ${op.name} (${op.file}, sha256 ${op.hash.slice(0, 12)})`;
    const same = byHash.get(op.hash);
    // A partner's id is its tool's, kept as sent, so an edited text can keep it: the app
    // would get other fields under the id it sends. (Ours are hashed from the text itself.)
    // Compared as printed, as ours are hashed: a reformatted text is the same operation.
    if (same && same.text !== op.text && print(parse(same.text)) !== print(parse(op.text))) {
      findings.push({
        kind: 'operations',
        group: 'persisted operations',
        location,
        message: `changed under the same id: the partner's app sends ${op.hash.slice(0, 12)} and would get what the new text selects; restore the released text (a new operation needs a new id from the partner's tool)`,
        rule: 'operation-changed',
        contract: `contracts/operations/${same.file}`,
      });
    }
    if (!same) {
      const renamed = current.find((o) => o.client === op.client && (o.name === op.name || o.file === op.file));
      findings.push({
        kind: 'operations',
        group: 'persisted operations',
        location,
        message:
          renamed && op.client !== undefined && print(parse(renamed.text)) === print(parse(op.text))
            ? `its id changed to ${renamed.hash.slice(0, 12)} with the same text: the partner's released app still sends ${op.hash.slice(0, 12)} and gets PERSISTED_QUERY_NOT_FOUND (keep the released id line)`
            : renamed
              ? `changed: its text now hashes to ${renamed.hash.slice(0, 12)}, so released clients sending ${op.hash.slice(0, 12)} get PERSISTED_QUERY_NOT_FOUND (add the new text as a new operation file, keep the old one)`
              : 'removed: released clients still send its hash',
        rule: renamed ? 'operation-changed' : 'operation-removed',
        contract: `contracts/operations/${op.file}`,
      });
    }
    // One entry per distinct error: a variable used twice in a position it no longer fits is one break, reported once by graphql-js per use.
    for (const message of new Set(validate(schema, parse(op.text)).map((e) => e.message))) {
      // A field the schema lost: the same change the schema check reports, so the same cause.
      const lost = /^Cannot query field "([^"]+)" on type "([^"]+)"/.exec(message);
      findings.push({
        ...(lost ? { cause: `\`${lost[2]}.${lost[1]}\` removed`, contract: 'contracts/schema.graphql' } : { contract: `contracts/operations/${op.file}` }),
        kind: 'operations',
        group: 'released operations against the new schema',
        location,
        message: `no longer valid: ${message}`,
        rule: 'operation-invalid',
      });
    }
  }
  return { kind: 'operations', findings, checked: `${released.length} released operations, ${current.length} current`, notes: [] };
}
