/**
 * What every GraphQL peer serves, so they differ from the service only in the server:
 * the same executable schema and resolvers (src/graphql/schema.ts), a fresh set of
 * DataLoaders per request (src/graphql/loaders.ts, one statement per level) and the demo
 * data in a SQLite file of their own (DATA_DIR, synchronous=normal as the service).
 * No authentication: the peers act for the demo account, as bench/baseline/graphql-bare.ts does.
 *
 * The limits, in graphql-armor's terms (its depth and cost are counted differently from ours):
 * - depth: armor counts the leaf field as a level (`{ user { name } }` is 2), ours does
 *   not (root field 0). `ARMOR_MAX_DEPTH` = 4 is the armor limit that refuses the
 *   benchmark's over-cost query (depth 5 in armor's count, 4 in ours); it also refuses
 *   the accepted 522-point `user{posts{comments{author{name}}}}` (5 in armor's
 *   count), which our depth 4 accepts: the peers are stricter there.
 * - cost: armor prices depth (x1.5 per level) and only a literal `first`, not list
 *   sizes; `{ user { friends { friends { friends { name } } } } }` (3222 in ours) costs
 *   21.3 in armor's model and the accepted simple query 35, so no armor cost ceiling
 *   refuses the first and accepts the second. `ARMOR_MAX_COST` = 1000 is kept at our
 *   ceiling's number: it runs on every request (its cost is measured) but refuses
 *   neither benchmark query; the depth limit does the refusing.
 */
import { join } from 'node:path';
import { createSchema } from '../../src/graphql/schema';
import { createLoaders } from '../../src/graphql/loaders';
import type { GraphqlContext } from '../../src/graphql/resolvers';
import { SqliteStore } from '../../src/store';

export const ARMOR_MAX_DEPTH = 4;
export const ARMOR_MAX_COST = 1000;

/** armor reports through the validation context instead of throwing (a throw is a 500 in some servers). */
export const armorOptions = {
  propagateOnRejection: false,
  onReject: [(ctx: { reportError(e: Error): void } | null, err: Error) => ctx?.reportError(err)],
};

export async function peerData(file: string) {
  const store = new SqliteStore(join(process.env.DATA_DIR ?? '.', file), 'normal');
  await store.migrate();
  await store.seedDemo();
  const account = await store.ensureAccount('demo');
  const context = (): GraphqlContext => ({ store, account, loaders: createLoaders(store) });
  return { store, schema: createSchema(), context };
}

export const port = () => Number(process.env.PORT ?? 0);
export const host = () => process.env.HOST || '127.0.0.1';
