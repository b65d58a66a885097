/**
 * One autocannon run, reduced to the figures the benchmarks report. Load is generated in
 * this process; the server under test runs in a child process (see ./server.ts).
 */
import autocannon from 'autocannon';

export interface Load {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  /** A fixed body, or a function called for each request (for writes that must differ). */
  body?: string | (() => string);
  connections: number;
  /** Seconds. */
  duration: number;
  /** Requests in flight per connection; 1 (no pipelining) unless given. */
  pipelining?: number;
  /** Offered load, requests/s over all connections (open loop); as fast as answered unless given. */
  rate?: number;
}

export interface Measured {
  /** Mean requests per second over the run (autocannon's per-second samples). */
  requestsPerSec: number;
  /** Latency percentiles, milliseconds. */
  latencyP50: number;
  latencyP99: number;
  non2xx: number;
  /** Connection errors, timeouts included. */
  errors: number;
  /** Responses per status code, e.g. { '200': 41234 }. */
  statuses: Record<string, number>;
}

export async function measure(load: Load): Promise<Measured> {
  const { body } = load;
  const result = await autocannon({
    url: load.url,
    method: load.method ?? 'GET',
    headers: load.headers,
    connections: load.connections,
    duration: load.duration,
    pipelining: load.pipelining ?? 1,
    overallRate: load.rate,
    body: typeof body === 'string' ? body : undefined,
    requests: typeof body === 'function' ? [{ setupRequest: (req) => ({ ...req, body: body() }) }] : undefined,
  });
  const statuses: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = stat?.count ?? 0;
  return {
    requestsPerSec: result.requests.average,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    statuses,
  };
}

/** Several rounds as one: mean req/s and p50, worst p99, summed counts. */
export function combine(ms: Measured[]): Measured {
  const statuses: Record<string, number> = {};
  for (const m of ms) for (const [k, v] of Object.entries(m.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  return {
    requestsPerSec: ms.reduce((s, m) => s + m.requestsPerSec, 0) / ms.length,
    latencyP50: ms.reduce((s, m) => s + m.latencyP50, 0) / ms.length,
    latencyP99: Math.max(...ms.map((m) => m.latencyP99)),
    non2xx: ms.reduce((s, m) => s + m.non2xx, 0),
    errors: ms.reduce((s, m) => s + m.errors, 0),
    statuses,
  };
}

/** e.g. "200x41234,304x12". */
export const fmtStatuses = (s: Record<string, number>) =>
  Object.entries(s)
    .map(([k, v]) => `${k}x${v}`)
    .join(',') || 'none';
