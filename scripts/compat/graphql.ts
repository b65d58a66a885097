/**
 * GraphQL schema check: contracts/schema.graphql against the released one, by
 * @graphql-inspector/core's `diff`.
 *
 * - BREAKING fails.
 * - DANGEROUS fails unless contracts/compat-accepted.yaml lists it (accepted.ts), with
 *   one exception below.
 * - NON_BREAKING passes.
 *
 * The exception: the inspector calls any argument added to an existing field
 * DANGEROUS ("may involve a change in resolve function logic"). A nullable argument
 * with no default is absent from every released query, so the resolver sees exactly
 * what it saw before; that is an additive change and passes. An argument with a
 * default stays DANGEROUS: old queries now run with that default.
 */
import { buildSchema, isSpecifiedScalarType, validateSchema, type GraphQLSchema } from 'graphql';
import { ChangeType, CriticalityLevel, diff, type Change } from '@graphql-inspector/core';
import type { Accepted } from './accepted';
import { verbOf } from './causes';
import { GateError, type Finding, type KindResult } from './types';

export const ACCEPTED_FILE_HINT = 'contracts/compat-accepted.yaml';

/** The schema in `sdl`, checked whole: buildSchema leaves type-system rules (an interface field not implemented, say) to the first validation, which would otherwise throw later, inside a check, as a stack trace. */
export function readSchema(sdl: string, file: string): GraphQLSchema {
  let schema: GraphQLSchema;
  try {
    schema = buildSchema(sdl);
  } catch (err) {
    throw new GateError(`graphql: ${file} is not a valid schema: ${(err as Error).message}`);
  }
  const errors = validateSchema(schema);
  if (errors.length > 0) throw new GateError(`graphql: ${file} is not a valid schema: ${errors.map((e) => e.message).join('; ')}`);
  return schema;
}

/** A DANGEROUS change our policy treats as additive (see the file comment). */
export function isAdditiveArgument(change: Change): boolean {
  if (change.type !== ChangeType.FieldArgumentAdded) return false;
  const meta = change.meta as { addedArgumentType: string; hasDefaultValue: boolean };
  return !meta.addedArgumentType.endsWith('!') && !meta.hasDefaultValue;
}

export async function checkGraphql(currentSdl: string, releasedSdl: string, accepted: Accepted): Promise<KindResult> {
  const oldSchema = readSchema(releasedSdl, 'contracts/released/schema.graphql');
  const newSchema = readSchema(currentSdl, 'contracts/schema.graphql');
  const changes = await diff(oldSchema, newSchema);
  const findings: Finding[] = [];
  const notes: string[] = [];
  const used = new Set<number>();
  for (const change of changes) {
    const level = change.criticality.level;
    if (level === CriticalityLevel.NonBreaking) continue;
    const location = change.path ?? '(schema)';
    if (level === CriticalityLevel.Dangerous) {
      if (isAdditiveArgument(change)) continue;
      const i = accepted.graphql.findIndex((a) => a.path === location && a.message === change.message);
      if (i >= 0) {
        used.add(i);
        notes.push(`graphql: accepted DANGEROUS change at ${location}: ${change.message} (reason: ${accepted.graphql[i].reason})`);
        continue;
      }
    }
    findings.push({
      kind: 'graphql',
      group: level === CriticalityLevel.Breaking ? 'breaking' : `dangerous: fails unless listed in ${ACCEPTED_FILE_HINT}`,
      location,
      // The inspector's criticality reason is a paragraph of general advice; the message names the field.
      message: change.message,
      rule: `${change.type} ${level}`,
      cause: `\`${location}\` ${verbOf(String(change.type))}`,
      contract: 'contracts/schema.graphql',
    });
  }
  accepted.graphql.forEach((a, i) => {
    if (!used.has(i)) notes.push(`graphql: ${ACCEPTED_FILE_HINT} entry at ${a.path} matches no change (released since? remove it): ${a.message}`);
  });
  const types = Object.values(newSchema.getTypeMap()).filter((t) => !t.name.startsWith('__') && !isSpecifiedScalarType(t)).length;
  return { kind: 'graphql', findings, checked: `${types} types`, notes };
}
