/**
 * Serialized order representations by (order, revision, version, media type, path):
 * a revision names one immutable state, so its bytes and ETag never change and a GET
 * needs only the revision (one indexed column) to answer 200 from here or 304.
 * Bounded by entry count (each is one order's JSON, well under a few KB).
 */
import { Lru } from '../../lru';

export const REPRESENTATION_CACHE_ENTRIES = 10_000;

/** JSON text of bodies the writer can send as is (set for cached representations). */
export const serialized = new WeakMap<object, string>();

export class RepresentationCache<V> extends Lru<V> {
  constructor(max = REPRESENTATION_CACHE_ENTRIES) {
    super(max, max, () => 1);
  }
}
