/**
 * The per-account GraphQL cost budget (off by default, shared in Redis when scaled out; Shopify's leaky bucket):
 * `GRAPHQL_COST_BUDGET` points at most, `GRAPHQL_COST_RESTORE_RATE` restored per second.
 * Each operation is charged its exact computed cost (costRule.ts's formula, the same
 * number the ceiling judges) after validation and before any resolver runs; one that
 * would overdraw the bucket is refused with HTTP 429, `extensions.code` THROTTLED,
 * `Retry-After` and the points it lacks, and runs nothing (a refused operation runs no resolver).
 *
 * Every priced response carries Shopify's shape under `extensions.cost`:
 * `{ requestedQueryCost, throttleStatus: { maximumAvailable, currentlyAvailable, restoreRate } }`.
 * The bucket is the `Buckets` port (src/limits): in process, or shared in Redis.
 *
 * One function called from the request path (`charge`), kept apart from engine.ts so the
 * GraphQL-over-HTTP handler stays the protocol core.
 *
 * Per-request cost (the budget must stay under 5 % of a request): pricing walks the operation
 * against the schema (~4 µs for the benchmark query), so the price is remembered per
 * operation node and variables (a cached document hands back the same node); `status`
 * reads a bucket without charging it, for responses refused before pricing.
 */
import { GraphQLError, Kind, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { Buckets, TakeResult } from '../limits';
import { hasSyncBuckets, retryAfterSeconds } from '../limits';
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

/** A refusal carries its error (a WebSocket `error` message's) and, for HTTP, the whole answer's JSON. */
export type Charge = { admitted: true; cost: CostExtension } | { admitted: false; cost: CostExtension; retryAfterS: number; error: GraphQLError; body: string };

const fragmentsOf = new WeakMap<DocumentNode, Map<string, FragmentDefinitionNode>>();

/** Prices remembered per operation node, keyed by the variables' JSON ('' for none): a few sets each, like the verdict cache. */
const pricesOf = new WeakMap<OperationDefinitionNode, { schema: GraphQLSchema; prices: Map<string, number> }>();
const PRICES_PER_OPERATION = 16;
const PRICE_MAX_KEY_CHARS = 16 * 1024;

const hasKeys = (o: object): boolean => {
  for (const _ in o) return true;
  return false;
};

/** The document's fragments by name, once per (cached) document. */
function fragments(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  let known = fragmentsOf.get(document);
  if (!known) {
    known = new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
    fragmentsOf.set(document, known);
  }
  return known;
}

/** The operation's exact cost (costRule.ts's formula), computed once per operation node and variable set. */
function priceOf(schema: GraphQLSchema, document: DocumentNode, op: OperationDefinitionNode, variables: RawVariables): number {
  const key = variables == null || !hasKeys(variables) ? '' : JSON.stringify(variables);
  let known = pricesOf.get(op);
  if (known && known.schema !== schema) known = undefined; // priced against another schema: not reused
  const hit = known?.prices.get(key);
  if (hit !== undefined) return hit;
  const frags = fragments(document);
  const price = operationCost({ getSchema: () => schema, getFragment: (name) => frags.get(name) ?? null }, op, variables);
  if (key.length <= PRICE_MAX_KEY_CHARS) {
    if (!known) pricesOf.set(op, (known = { schema, prices: new Map() }));
    if (known.prices.size >= PRICES_PER_OPERATION) known.prices.delete(known.prices.keys().next().value!); // oldest first
    known.prices.set(key, price);
  }
  return price;
}

export function costBudget({ buckets, budget, restoreRate }: CostBudgetOptions) {
  const policy = { capacity: budget, ratePerSec: restoreRate };
  const extension = (requested: number, remaining: number): CostExtension => ({
    requestedQueryCost: requested,
    throttleStatus: { maximumAvailable: budget, currentlyAvailable: remaining, restoreRate },
  });
  function verdict(requested: number, taken: TakeResult): Charge {
    const cost = extension(requested, taken.remaining);
    if (taken.admitted) return { admitted: true, cost };
    const retryAfterS = retryAfterSeconds(taken.retryAfterMs);
    const pointsNeeded = requested - taken.remaining;
    const error = new GraphQLError(`Throttled: this operation costs ${requested} points and ${taken.remaining} are available; ${restoreRate} are restored per second, retry after ${retryAfterS} s`, {
      extensions: { code: GRAPHQL_CODES.THROTTLED, requestedQueryCost: requested, pointsNeeded, retryAfterSeconds: retryAfterS },
    });
    return { admitted: false, cost, retryAfterS, error, body: JSON.stringify({ errors: [error.toJSON()], extensions: { cost } }) };
  }
  // `{"cost":...}` as JSON.stringify writes it, the constant parts built once. Why not
  // stringify: the nested object's five numbers cost ~0.45 µs per response, 3 % of a
  // cached query (bench/limits-micro.ts); two number-to-text conversions cost ~0.05 µs.
  const costHead = '{"cost":{"requestedQueryCost":';
  const costMid = `,"throttleStatus":{"maximumAvailable":${JSON.stringify(budget)},"currentlyAvailable":`;
  const costTail = `,"restoreRate":${JSON.stringify(restoreRate)}}}}`;
  /** A take of `cost` points: no promise when the buckets are in this process. */
  const take = <T>(accountId: number, cost: number, then: (taken: TakeResult) => T): T | Promise<T> => {
    const key = `gql:${accountId}`;
    return hasSyncBuckets(buckets) ? then(buckets.takeNow(key, cost, policy)) : buckets.take(key, cost, policy).then(then);
  };
  return {
    /** Charges one validated operation to the account's bucket. */
    charge(accountId: number, schema: GraphQLSchema, document: DocumentNode, op: OperationDefinitionNode, variables: RawVariables): Charge | Promise<Charge> {
      const requested = priceOf(schema, document, op, variables);
      return take(accountId, requested, (taken) => verdict(requested, taken));
    },
    /**
     * The account's bucket as it stands, charging nothing (a take of 0 points): the
     * `extensions.cost` of a response refused before pricing (`requestedQueryCost` 0).
     */
    status(accountId: number): CostExtension | Promise<CostExtension> {
      return take(accountId, 0, (taken) => extension(0, taken.remaining));
    },
    /**
     * `JSON.stringify({ cost })` of a charge's `cost`, written without the object walk:
     * the text a successful response's `extensions` member holds (engine.ts splices it in).
     * Numbers become text as JSON.stringify writes them (both use Number's toString).
     */
    extensionsJson(cost: CostExtension): string {
      return costHead + cost.requestedQueryCost + costMid + cost.throttleStatus.currentlyAvailable + costTail;
    },
  };
}

export type CostBudget = ReturnType<typeof costBudget>;
