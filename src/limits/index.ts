export type { BucketPolicy, Buckets, SyncBuckets, TakeResult } from './buckets';
export { hasSyncBuckets, retryAfterSeconds } from './buckets';
export { MemoryBuckets } from './memoryBuckets';
export { RedisBuckets, type RedisScripting } from './redisBuckets';
