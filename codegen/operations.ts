/**
 * The client operations of contracts/operations/, read once for codegen and for the
 * compatibility gate (scripts/compat/operations.ts).
 *
 * - Ours: `contracts/operations/<Name>.graphql`, one named operation per file, sent as
 *   graphql-js's `print` of the file and hashed as the server hashes (APQ and the
 *   allowlist): the hex SHA-256 of that text.
 * - A partner's: `contracts/operations/<client>/<Name>.graphql`, registered by
 *   `npm run operations:import` from the manifest its own tool produced (Apollo iOS,
 *   Apollo Kotlin, Apollo Client, Relay). The first line is `# id: <the client's id>`;
 *   the rest is the operation text exactly as the client's tool printed it. The id is
 *   kept as sent (its apps send it, so it must not change) and the text is never
 *   reprinted (the client may send it with the id, and the server checks that it hashes to it).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Kind, parse, print, type OperationDefinitionNode } from 'graphql';

/**
 * The hash of an operation's text, as the automatic persisted queries protocol defines it
 * (hex SHA-256 of the UTF-8 text) and as the service computes it for APQ and the allowlist.
 * Written here rather than imported: codegen reads contracts and writes generated/, and
 * does not depend on the service it generates for (codegen/operations.test.ts checks the
 * two agree).
 */
export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export interface PersistedOperation {
  name: string;
  /** What clients send: our hash, or a partner's id as its tool made it. */
  hash: string;
  text: string;
  /** The file, relative to contracts/operations/ (`User.graphql`, `ios/Order.graphql`). */
  file: string;
  /** The partner folder; undefined for ours. */
  client?: string;
}

/** A file of contracts/operations/ that cannot be read as an operation. */
export class OperationsError extends Error {
  override name = 'OperationsError';
}

/** The header line of a partner's operation file. */
export const ID_LINE = /^# id: (\S+)\n/;

function operationOf(file: string, text: string): OperationDefinitionNode {
  let doc;
  try {
    doc = parse(text);
  } catch (err) {
    throw new OperationsError(`contracts/operations/${file} is not GraphQL: ${(err as Error).message}`);
  }
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (ops.length !== 1 || !ops[0].name) throw new OperationsError(`contracts/operations/${file}: exactly one named operation per file`);
  return ops[0];
}

/** Every operation of an `operations/` folder: ours first (by file), then each partner's folder (by name). */
export function readOperationsDir(dir: string): PersistedOperation[] {
  if (!existsSync(dir)) throw new OperationsError(`${dir} is missing`);
  const entries = readdirSync(dir).sort();
  const ours = entries
    .filter((f) => f.endsWith('.graphql'))
    .map((file): PersistedOperation => {
      const source = readFileSync(join(dir, file), 'utf8');
      const op = operationOf(file, source);
      const text = print(parse(source));
      return { name: op.name?.value ?? file, hash: sha256Hex(text), text, file };
    });
  const partners = entries
    .filter((f) => statSync(join(dir, f)).isDirectory())
    .flatMap((client) =>
      readdirSync(join(dir, client))
        .filter((f) => f.endsWith('.graphql'))
        .sort()
        .map((f): PersistedOperation => {
          const file = `${client}/${f}`;
          const source = readFileSync(join(dir, file), 'utf8');
          const id = ID_LINE.exec(source);
          if (!id) throw new OperationsError(`contracts/operations/${file}: a partner's operation starts with "# id: <its client's id>" (npm run operations:import writes it)`);
          const text = source.slice(id[0].length);
          const op = operationOf(file, text);
          return { name: op.name?.value ?? f, hash: id[1], text, file, client };
        }),
    );
  const seen = new Map<string, string>();
  for (const op of [...ours, ...partners]) {
    const other = seen.get(op.hash);
    if (other !== undefined) throw new OperationsError(`contracts/operations/${op.file}: id ${op.hash} is also ${other}'s`);
    seen.set(op.hash, op.file);
  }
  return [...ours, ...partners];
}

/** The operations codegen reads (`<root>/contracts/operations`). */
export function readOperations(root: string): PersistedOperation[] {
  return readOperationsDir(join(root, 'contracts/operations'));
}

/** An Apollo persisted-query manifest (`@apollo/generate-persisted-query-manifest`'s format, version 1). */
export interface ApolloManifest {
  format: 'apollo-persisted-query-manifest';
  version: 1;
  operations: { id: string; name: string; type: 'query' | 'mutation' | 'subscription'; body: string }[];
}

/** Our operations as an Apollo manifest: Apollo Client's persisted-query link sends these ids, the allowlist knows them. */
export function apolloManifest(ops: readonly PersistedOperation[]): ApolloManifest {
  return {
    format: 'apollo-persisted-query-manifest',
    version: 1,
    operations: ops.filter((o) => o.client === undefined).map((o) => ({ id: o.hash, name: o.name, type: operationOf(o.file, o.text).operation, body: o.text })),
  };
}
