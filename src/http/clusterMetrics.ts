/**
 * `/metrics` with WORKERS>1: one scrape shows the whole instance.
 *
 * node:cluster workers share one port, so successive scrapes land on different workers; each
 * worker's own registry would make every counter jump back and forth between them. Choice:
 * prom-client's AggregatorRegistry on the primary, not a `worker` label on every series. A
 * label still leaves each scrape seeing one worker's series only (the others' would be missing
 * from it), and multiplies series by the worker count; aggregation answers every scrape with
 * the instance's totals (counters and histograms summed, gauges by the aggregator prom-client
 * declares for them: event-loop lag averaged, versions `first`...), which is what a rate()
 * over the instance wants. Per-worker detail is given up; the instance is what is scraped.
 *
 * The worker that receives the scrape asks the primary over the cluster IPC channel; the
 * primary's AggregatorRegistry asks every worker for its registry as JSON (prom-client's own
 * protocol), sums, and answers the asking worker with the text.
 */
import cluster from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Metrics } from './metrics';

const REQUEST = 'orderline:metrics-request';
const ANSWER = 'orderline:metrics-answer';
/** prom-client's primary gives up on a silent worker after 5 s; wait a little longer for its error. */
const SCRAPE_TIMEOUT_MS = 6000;

interface Answer {
  type: typeof ANSWER;
  id: number;
  text?: string;
  error?: string;
}

/** Primary: answers workers' scrape requests with the aggregate of every worker's registry. */
export function serveInstanceMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: string; id?: number }) => {
    if (message?.type !== REQUEST) return;
    const reply = (a: Omit<Answer, 'type' | 'id'>) => worker.isConnected() && worker.send({ type: ANSWER, id: message.id, ...a });
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (err: Error) => reply({ error: err.message }),
    );
  });
}

/** Worker: lends `metrics.registry` to the primary's aggregation and makes `metrics.scrape` the instance's. */
export function scrapeWholeInstance(metrics: Metrics): void {
  new AggregatorRegistry(); // installs prom-client's worker-side responder
  AggregatorRegistry.setRegistries([metrics.registry]);
  let next = 0;
  const pending = new Map<number, (a: Answer) => void>();
  process.on('message', (m: Answer) => {
    if (m?.type === ANSWER) pending.get(m.id)?.(m);
  });
  metrics.scrape = () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => settle({ type: ANSWER, id, error: 'the primary did not answer' }), SCRAPE_TIMEOUT_MS);
      const settle = (a: Answer) => {
        clearTimeout(timer);
        pending.delete(id);
        if (a.text !== undefined) resolve(a.text);
        else reject(new Error(`instance metrics: ${a.error}`));
      };
      pending.set(id, settle);
      process.send!({ type: REQUEST, id });
    });
}
