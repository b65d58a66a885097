/**
 * The processes of bench/soak/client.ts holding the subscribers, as bench/soak.ts and
 * bench/storm.ts drive them: their figures summed over the processes.
 */
import { join } from 'node:path';
import { ProcessPool } from '../lib/processes';
import type { Attempts, StormSample, SubCommand, SubStats } from './client';
import { addCounts, zeroCounts } from './seqs';

export class Subscribers extends ProcessPool<SubCommand> {
  /** `n` processes at scheduling priority `nice` (see ProcessPool). */
  static start(n: number, nice = 0): Subscribers {
    return new Subscribers(join(__dirname, 'client.ts'), n, 'subscriber', undefined, nice);
  }

  async stats(): Promise<SubStats> {
    const all = await this.all<SubStats>({ cmd: 'stats' });
    const sum = (k: 'subscribers' | 'connected' | 'connects' | 'failedConnects' | 'churned' | 'gets' | 'getFailures' | 'unknown') => all.reduce((s, x) => s + x[k], 0);
    const merge = (k: 'closes' | 'refusals' | 'errors' | 'perInstance') => all.reduce<Record<string, number>>((m, x) => (Object.entries(x[k]).forEach(([a, v]) => (m[a] = (m[a] ?? 0) + v)), m), {});
    return {
      subscribers: sum('subscribers'),
      connected: sum('connected'),
      connects: sum('connects'),
      failedConnects: sum('failedConnects'),
      churned: sum('churned'),
      gets: sum('gets'),
      getFailures: sum('getFailures'),
      unknown: sum('unknown'),
      closes: merge('closes'),
      refusals: merge('refusals'),
      errors: merge('errors'),
      perInstance: merge('perInstance'),
      counts: all.reduce((c, x) => addCounts(c, x.counts), zeroCounts()),
    };
  }

  /** Every process's storm account since the last `mark`, joined. */
  /** Every process's connection attempts and timer lateness since the last `mark`, joined. */
  async attempts(): Promise<Attempts> {
    const all = await this.all<Attempts>({ cmd: 'attempts' });
    return { at: all.flatMap((x) => x.at), lateMs: all.flatMap((x) => x.lateMs) };
  }

  async storm(): Promise<StormSample> {
    const all = await this.all<StormSample>({ cmd: 'storm' });
    return {
      subscribers: all.reduce((n, x) => n + x.subscribers, 0),
      connected: all.reduce((n, x) => n + x.connected, 0),
      dropped: all.reduce((n, x) => n + x.dropped, 0),
      backAt: all.flatMap((x) => x.backAt),
      refused: all.flatMap((x) => x.refused),
      failed: all.reduce((n, x) => n + x.failed, 0),
      withLost: all.reduce((n, x) => n + x.withLost, 0),
      withDuplicates: all.reduce((n, x) => n + x.withDuplicates, 0),
      withResyncs: all.reduce((n, x) => n + x.withResyncs, 0),
    };
  }
}
