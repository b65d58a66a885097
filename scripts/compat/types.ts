/**
 * The values every check of the compatibility gate returns (README,
 * "Compatibility gate"). Checks report breaking changes as findings, never throw them;
 * only a gate that cannot run (a missing file, no oasdiff binary, an unreadable
 * contract) throws, and that is a `GateError` (exit code 2, not 1).
 */

/** The contract kinds, in report order. */
export const KINDS = ['openapi', 'asyncapi', 'graphql', 'operations'] as const;
export type Kind = (typeof KINDS)[number];

/** One breaking change: which contract, where, and what happened to which field. */
export interface Finding {
  kind: Kind;
  /** Sub-heading of the report, e.g. `REST v1` or `payloads`; optional. */
  group?: string;
  /** Where: `GET /v2/orders/{orderId}`, `message OrderEventMessage`, `User.friends`... */
  location: string;
  /** What: the tool's sentence, naming the field. */
  message: string;
  /** The tool's rule id (`response-required-property-removed`, `FIELD_REMOVED`...). */
  rule?: string;
  /**
   * The one change this finding is a consequence of (causes.ts), e.g. "`OrderV2.note`
   * removed": findings with the same cause are one breaking change, reported once with
   * every operation and message it breaks listed under it. Undefined: its own cause.
   */
  cause?: string;
  /** The contract file the cause is in, relative to the repository (`contracts/openapi.yaml`). */
  contract?: string;
  /** The cause's JSON pointer in `contract` (`/components/schemas/OrderV2/properties/note`). */
  pointer?: string;
}

/** What one check compared and found. */
export interface KindResult {
  kind: Kind;
  findings: Finding[];
  /** What was compared, for the one-line summary (`58 operations; REST v1, v2`). */
  checked: string;
  /** Facts worth a look that do not fail the gate (accepted changes, unjudged edits). */
  notes: string[];
}

/** The gate itself could not run: exit code 2. */
export class GateError extends Error {
  override name = 'GateError';
}

/** A node of a parsed contract read as an object (anything else as an empty one): the contracts compared are known to parse. */
export const asRecord = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
