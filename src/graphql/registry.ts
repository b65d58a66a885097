/**
 * The APQ registry port: hash -> query text. In process it is a bounded LRU; the
 * scale-out deployment shares one in Redis so a hash registered on one instance is
 * found on every other (DESIGN.md "Running it").
 */
import { LRUCache } from 'lru-cache';

/** Bytes of registered text kept in process at most (2 per UTF-16 unit). */
export const APQ_CACHE_MAX_BYTES = 32 * 1024 * 1024;

export interface PersistedQueryRegistry {
  get(hash: string): Promise<string | undefined>;
  /**
   * What this process already holds for the hash, without I/O (undefined: ask `get`).
   * The hash-only APQ request reads it synchronously, so a registered hash costs no
   * promise or event-loop hop more than the same query sent as text.
   */
  peek(hash: string): string | undefined;
  set(hash: string, text: string): Promise<void>;
}

/**
 * Bounded in entries and in bytes of text: APQ lets any client register any valid
 * text, so an unbounded map would be a memory leak any caller can drive.
 */
/** What one entry weighs against the byte bound: both strings at 2 bytes per UTF-16 unit, plus a fixed overhead. */
export const registryEntryBytes = (text: string, hash: string): number => 16 + 2 * (text.length + hash.length);

export class LruRegistry implements PersistedQueryRegistry {
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
