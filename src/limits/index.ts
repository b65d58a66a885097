export type { BucketPolicy, Buckets, TakeResult } from './buckets';
export { MemoryBuckets } from './memoryBuckets';
export { RedisBuckets, type RedisScripting } from './redisBuckets';
