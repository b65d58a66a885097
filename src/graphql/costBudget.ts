/**
 * The per-account GraphQL cost budget (DESIGN.md "Limits"; Shopify's leaky bucket):
 * `GRAPHQL_COST_BUDGET` points at most, `GRAPHQL_COST_RESTORE_RATE` restored per second.
 * Each operation is charged its exact computed cost (costRule.ts's formula, the same
 * number the ceiling judges) after validation and before any resolver runs; one that
 * would overdraw the bucket is refused with HTTP 429, `extensions.code` THROTTLED,
 * `Retry-After` and the points it lacks, and runs nothing (invariant 5's spirit).
 *
 * Every priced response carries Shopify's shape under `extensions.cost`:
 * `{ requestedQueryCost, throttleStatus: { maximumAvailable, currentlyAvailable, restoreRate } }`.
 * The bucket is the `Buckets` port (src/limits): in process, or shared in Redis.
 *
 * One function called from the request path (`charge`), kept apart from http.ts so the
 * GraphQL-over-HTTP handler stays the protocol core.
 */
import { GraphQLError, Kind, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { Buckets } from '../limits';
import { operationCost } from './costRule';
import { GRAPHQL_CODES } from './errors';
import type { RawVariables } from './selection';

export interface CostBudgetOptions {
  buckets: Buckets;
  /** Points a full bucket holds (GRAPHQL_COST_BUDGET). */
  budget: number;
  /** Points restored per second (GRAPHQL_COST_RESTORE_RATE). */
  restoreRate: number;
}

export interface CostExtension {
  requestedQueryCost: number;
  throttleStatus: { maximumAvailable: number; currentlyAvailable: number; restoreRate: number };
}

export type Charge =
  | { admitted: true; cost: CostExtension }
  | { admitted: false; cost: CostExtension; retryAfterS: number; body: string };

const fragmentsOf = new WeakMap<DocumentNode, Map<string, FragmentDefinitionNode>>();

/** The document's fragments by name, once per (cached) document. */
function fragments(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  let known = fragmentsOf.get(document);
  if (!known) {
    known = new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
    fragmentsOf.set(document, known);
  }
  return known;
}

export function costBudget({ buckets, budget, restoreRate }: CostBudgetOptions) {
  const policy = { capacity: budget, ratePerSec: restoreRate };
  return {
    /** Charges one validated operation to the account's bucket. */
    async charge(accountId: number, schema: GraphQLSchema, document: DocumentNode, op: OperationDefinitionNode, variables: RawVariables): Promise<Charge> {
      const frags = fragments(document);
      const requested = operationCost({ getSchema: () => schema, getFragment: (name) => frags.get(name) ?? null }, op, variables);
      const taken = await buckets.take(`gql:${accountId}`, requested, policy);
      const cost: CostExtension = {
        requestedQueryCost: requested,
        throttleStatus: { maximumAvailable: budget, currentlyAvailable: taken.remaining, restoreRate },
      };
      if (taken.admitted) return { admitted: true, cost };
      const retryAfterS = Math.max(1, Math.ceil(taken.retryAfterMs / 1000));
      const pointsNeeded = requested - taken.remaining;
      const error = new GraphQLError(`Throttled: this operation costs ${requested} points and ${taken.remaining} are available; ${restoreRate} are restored per second, retry after ${retryAfterS} s`, {
        extensions: { code: GRAPHQL_CODES.THROTTLED, requestedQueryCost: requested, pointsNeeded, retryAfterSeconds: retryAfterS },
      });
      return { admitted: false, cost, retryAfterS, body: JSON.stringify({ errors: [error.toJSON()], extensions: { cost } }) };
    },
  };
}

export type CostBudget = ReturnType<typeof costBudget>;
