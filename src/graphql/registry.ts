/**
 * The APQ registry port: hash -> query text. In process it is a bounded LRU; the
 * scale-out deployment shares one in Redis so a hash registered on one instance is
 * found on every other (DESIGN.md "Running it").
 */
export interface PersistedQueryRegistry {
  get(hash: string): Promise<string | undefined>;
  set(hash: string, text: string): Promise<void>;
}

/**
 * Bounded in entries and in bytes of text, least recently used evicted first: APQ lets
 * any client register any valid text, so an unbounded map would be a memory leak any
 * caller can drive. A Map keeps insertion order, so re-inserting on a hit is the LRU.
 */
export class LruRegistry implements PersistedQueryRegistry {
  private readonly entries = new Map<string, string>();
  private bytes = 0;

  constructor(
    private readonly maxEntries = 10_000,
    private readonly maxBytes = 32 * 1024 * 1024,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  async get(hash: string): Promise<string | undefined> {
    const text = this.entries.get(hash);
    if (text !== undefined) {
      this.entries.delete(hash);
      this.entries.set(hash, text);
    }
    return text;
  }

  async set(hash: string, text: string): Promise<void> {
    const old = this.entries.get(hash);
    if (old !== undefined) {
      this.bytes -= old.length;
      this.entries.delete(hash);
    }
    this.entries.set(hash, text);
    this.bytes += text.length;
    for (const [oldest, oldText] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= oldText.length;
    }
  }
}
