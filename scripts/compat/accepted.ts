/**
 * The reviewed accepted-changes file, contracts/compat-accepted.yaml (README,
 * "Compatibility gate": a DANGEROUS GraphQL change fails unless listed as accepted).
 *
 * Shape (the file's header comment is the user documentation):
 *
 *   graphql:
 *     - path: Order.status
 *       message: "<the change's message, exactly as the gate printed it>"
 *       reason: "<why released clients are fine; who reviewed it>"
 *
 * Only DANGEROUS changes can be accepted; a BREAKING change needs a new version, so
 * listing one has no effect. A missing file means nothing is accepted.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { GateError } from './types';

export interface AcceptedChange {
  path: string;
  message: string;
  reason: string;
}

export interface Accepted {
  graphql: AcceptedChange[];
}

const FIELDS = ['path', 'message', 'reason'] as const;

/** Reads and checks the file; a malformed entry is a GateError (a typo must not accept a change silently). */
export function readAccepted(file: string): Accepted {
  if (!existsSync(file)) return { graphql: [] };
  let doc: unknown;
  try {
    doc = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new GateError(`${file}: not YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return { graphql: [] };
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new GateError(`${file}: expected a map with a \`graphql\` list`);
  const unknownKeys = Object.keys(doc).filter((k) => k !== 'graphql');
  if (unknownKeys.length > 0) throw new GateError(`${file}: unknown key(s) ${unknownKeys.join(', ')}; only \`graphql\` is read`);
  const list = (doc as { graphql?: unknown }).graphql ?? [];
  if (!Array.isArray(list)) throw new GateError(`${file}: \`graphql\` must be a list`);
  const graphql = list.map((entry: unknown, i) => {
    const e = (entry ?? {}) as Record<string, unknown>;
    for (const f of FIELDS) {
      if (typeof e[f] !== 'string' || !e[f].trim()) {
        throw new GateError(`${file}: graphql[${i}] needs a non-empty \`${f}\` (entries have ${FIELDS.join(', ')})`);
      }
    }
    const extra = Object.keys(e).filter((k) => !(FIELDS as readonly string[]).includes(k));
    if (extra.length > 0) throw new GateError(`${file}: graphql[${i}] has unknown key(s) ${extra.join(', ')}`);
    return { path: e.path as string, message: e.message as string, reason: e.reason as string };
  });
  return { graphql };
}
