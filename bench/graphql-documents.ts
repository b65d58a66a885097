/**
 * `npm run --silent build && npx tsx bench/graphql-documents.ts [documents] [aliases]`:
 * what distinct GraphQL documents leave in a running service, from outside. One client
 * sends `documents` different query texts (default 2000), each of `aliases` aliased
 * `order` fields (default 40), each twice (the second execution compiles it), one at a
 * time, and the service's RSS (/proc/<pid>/status) and V8 heap used (its /metrics) are
 * printed every 500 documents. A service whose memory only levels off at its caches' bounds
 * passes; one that keeps something per document grows with the count.
 *
 * This is how the V8 compilation cache's hold on graphql-jit's compiled functions showed
 * (BENCHMARKS.md, Reliability): RSS grew by about 0.8 MB per 40-alias document.
 */
import { readFileSync } from 'node:fs';
import { request, Agent } from 'node:http';
import { startDeployment } from './lib/deployment';

const DOCUMENTS = Number(process.argv[2] ?? 2000);
const ALIASES = Number(process.argv[3] ?? 40);
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function heapMb(metricsUrl: string): Promise<number | undefined> {
  const res = await fetch(`${metricsUrl}/metrics`).catch(() => undefined);
  const m = res && /^nodejs_heap_size_used_bytes (\S+)$/m.exec(await res.text());
  return m ? Number(m[1]) / 1048576 : undefined;
}

function post(url: string, token: string, query: string): Promise<number> {
  const body = JSON.stringify({ query });
  return new Promise((resolve, reject) => {
    const req = request(`${url}/graphql`, { method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const documentText = (n: number) => `{ ${Array.from({ length: ALIASES }, (_, i) => `o${n}_${i}: order(id: "${(i % 5) + 1}") { id note revision }`).join(' ')} }`;

async function main(): Promise<void> {
  const d = await startDeployment('embedded', 1, { LOG_LEVEL: 'silent' });
  const { srv, token } = d;
  try {
    const line = async (what: string) => console.log(`${what}: RSS ${rssMb(srv.pid).toFixed(0)} MB, heap used ${(await heapMb(srv.metricsUrl))?.toFixed(0) ?? '?'} MB`);
    await line('started');
    const statuses = new Map<number, number>();
    for (let n = 0; n < DOCUMENTS; n++) {
      for (let k = 0; k < 2; k++) {
        const s = await post(srv.url, token, documentText(n));
        statuses.set(s, (statuses.get(s) ?? 0) + 1);
      }
      if ((n + 1) % 500 === 0 || n + 1 === DOCUMENTS) await line(`${n + 1} documents of ${ALIASES} aliases, each sent twice`);
    }
    console.log(`statuses: ${[...statuses].map(([s, c]) => `${s} x ${c}`).join(', ')}`);
  } finally {
    agent.destroy();
    await d.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
