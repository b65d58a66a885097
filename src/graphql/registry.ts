/**
 * The APQ registry port: hash -> query text. In process it is a bounded LRU; the
 * scale-out deployment shares one in Redis so a hash registered on one instance is
 * found on every other.
 */
import { LRUCache } from 'lru-cache';

/** Bytes of registered text kept in process at most (2 per UTF-16 unit). */
export const APQ_CACHE_MAX_BYTES = 32 * 1024 * 1024;

export interface PersistedQueryRegistry {
  /** The text registered under the hash, or undefined. */
  get(hash: string): Promise<string | undefined>;
  /** Registers the text under its hash (the caller checked that it hashes to it); the latest registration wins. */
  set(hash: string, text: string): Promise<void>;
}

/**
 * The in-process lookup of a registry that keeps texts in this process (`LruRegistry`,
 * and `RedisRegistry`'s in-process front). Why it exists: the hash-only APQ request
 * reads it synchronously, so a hash this process has seen costs no promise or
 * event-loop hop more than the same query sent as text. Callers test for it with
 * `isPeekable` and otherwise ask `get`. Proven by `peekableRegistry.contract.ts`.
 */
export interface PeekableRegistry {
  /** What this process already holds for the hash, without I/O; undefined means "ask `get`", not "unknown". */
  peek(hash: string): string | undefined;
}

/** True when the registry offers the in-process lookup. */
export function isPeekable<R extends object>(registry: R): registry is R & PeekableRegistry {
  return typeof (registry as Partial<PeekableRegistry>).peek === 'function';
}

/** What one entry weighs against the byte bound: both strings at 2 bytes per UTF-16 unit, plus a fixed overhead. */
export const registryEntryBytes = (text: string, hash: string): number => 16 + 2 * (text.length + hash.length);

/**
 * Bounded in entries and in bytes of text: APQ lets any client register any valid
 * text, so an unbounded map would be a memory leak any caller can drive.
 */
export class LruRegistry implements PersistedQueryRegistry, PeekableRegistry {
  private readonly lru: LRUCache<string, string>;

  constructor(maxEntries = 10_000, maxBytes = APQ_CACHE_MAX_BYTES) {
    // A text larger than the whole bound is simply not kept (lru-cache refuses it).
    this.lru = new LRUCache<string, string>({ max: maxEntries, maxSize: maxBytes, sizeCalculation: registryEntryBytes });
  }

  get size(): number {
    return this.lru.size;
  }

  /** Bytes held, as `registryEntryBytes` weighs them. */
  get bytes(): number {
    return this.lru.calculatedSize;
  }

  async get(hash: string): Promise<string | undefined> {
    return this.lru.get(hash);
  }

  peek(hash: string): string | undefined {
    return this.lru.get(hash);
  }

  async set(hash: string, text: string): Promise<void> {
    this.lru.set(hash, text);
  }
}
