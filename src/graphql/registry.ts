/**
 * The APQ registry port: hash -> query text. In process it is a bounded LRU; the
 * scale-out deployment shares one in Redis so a hash registered on one instance is
 * found on every other (DESIGN.md "Running it").
 */
import { Lru } from '../lru';

export interface PersistedQueryRegistry {
  get(hash: string): Promise<string | undefined>;
  set(hash: string, text: string): Promise<void>;
}

/**
 * Bounded in entries and in bytes of text: APQ lets any client register any valid
 * text, so an unbounded map would be a memory leak any caller can drive.
 */
export class LruRegistry implements PersistedQueryRegistry {
  private readonly lru: Lru<string>;

  constructor(maxEntries = 10_000, maxBytes = 32 * 1024 * 1024) {
    this.lru = new Lru<string>(maxEntries, maxBytes, (_k, text) => text.length);
  }

  get size(): number {
    return this.lru.size;
  }

  async get(hash: string): Promise<string | undefined> {
    return this.lru.get(hash);
  }

  async set(hash: string, text: string): Promise<void> {
    this.lru.set(hash, text);
  }
}
