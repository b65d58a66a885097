/**
 * The client operations of contracts/operations/: one named operation per file, sent as
 * graphql-js's `print` of the file, hashed as the server hashes (APQ and the allowlist).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kind, parse, print, type OperationDefinitionNode } from 'graphql';
import { sha256Hex } from '../src/graphql/persisted';

export interface PersistedOperation {
  name: string;
  hash: string;
  text: string;
}

/** One operation per file; the text sent is graphql-js's `print` of the file (stable, canonical). */
export function readOperations(root: string): PersistedOperation[] {
  const dir = join(root, 'contracts/operations');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => {
      const doc = parse(readFileSync(join(dir, f), 'utf8'));
      const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
      if (ops.length !== 1 || !ops[0].name) throw new Error(`contracts/operations/${f}: exactly one named operation per file`);
      const text = print(doc);
      return { name: ops[0].name.value, hash: sha256Hex(text), text };
    });
}
