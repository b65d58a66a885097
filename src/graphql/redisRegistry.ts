/**
 * The APQ registry shared by every instance when scaled out (`REDIS_URL`): a hash
 * registered on one instance is found on all. Redis holds `<prefix>apq:<hash>` with a
 * TTL, so the shared set is bounded by time (and by Redis's own maxmemory policy); an
 * in-process LRU in front keeps the hot path off the network.
 *
 * Redis being down is not the client's fault, so it never becomes an error: a failed
 * read is a miss (the client then sends the text, which works) and a failed write only
 * means other instances will ask for the text once more.
 */
import type { PersistedQueryRegistry, PeekableRegistry, LruRegistry } from './registry';
import { sha256Hex } from './persisted';

/** The two commands used (ioredis satisfies it): graphql/ needs no Redis client of its own. */
export interface RedisKv {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ex: 'EX', seconds: number): Promise<unknown>;
}

export interface RedisRegistryOptions {
  prefix: string;
  /** Seconds a registered text lives in Redis after its registration. */
  ttlS: number;
  /** The in-process front. */
  local: LruRegistry;
  onError?: (err: unknown) => void;
}

export class RedisRegistry implements PersistedQueryRegistry, PeekableRegistry {
  constructor(
    private readonly redis: RedisKv,
    private readonly opts: RedisRegistryOptions,
  ) {}

  private key(hash: string): string {
    return `${this.opts.prefix}apq:${hash}`;
  }

  /** The in-process front only: a text registered elsewhere is found by `get`. */
  peek(hash: string): string | undefined {
    return this.opts.local.peek(hash);
  }

  async get(hash: string): Promise<string | undefined> {
    const local = this.opts.local.peek(hash);
    if (local !== undefined) return local;
    let text: string | null;
    try {
      text = await this.redis.get(this.key(hash));
    } catch (err) {
      this.opts.onError?.(err);
      return undefined;
    }
    // A value that does not hash to its key (another writer under our prefix) is not ours to run.
    if (text === null || sha256Hex(text) !== hash) return undefined;
    await this.opts.local.set(hash, text);
    return text;
  }

  async set(hash: string, text: string): Promise<void> {
    await this.opts.local.set(hash, text);
    try {
      await this.redis.set(this.key(hash), text, 'EX', this.opts.ttlS);
    } catch (err) {
      this.opts.onError?.(err);
    }
  }
}
