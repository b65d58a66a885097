import { runBucketsContract } from './buckets.contract';
import { runSyncBucketsContract } from './syncBuckets.contract';
import { MemoryBuckets } from './memoryBuckets';

runBucketsContract('MemoryBuckets', async (now) => ({ buckets: new MemoryBuckets(now), close: async () => undefined }));
runSyncBucketsContract('MemoryBuckets', async (now) => ({ buckets: new MemoryBuckets(now), close: async () => undefined }));

describe('MemoryBuckets', () => {
  it('forgets the least recently used bucket past its key bound (that key starts full again)', () => {
    const b = new MemoryBuckets(() => 1000, 2);
    const policy = { capacity: 1, ratePerSec: 1 };
    for (const k of ['a', 'b', 'c']) expect(b.takeNow(k, 1, policy).admitted).toBe(true);
    expect(b.takeNow('a', 1, policy).admitted).toBe(true);
    expect(b.takeNow('c', 1, policy).admitted).toBe(false);
  });
});
