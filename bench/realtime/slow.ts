/** One slow request must not stall the streams. */
import { pidOfPort } from '../lib/realtime-proc';
import { type Running, startService } from '../lib/server';
import { Clients } from './clients';
import { type Mode, type RunResult, combineRuns, fmtRun, measureRun } from './fanout';
import { type Row } from './rows';
import { call, loopP99, patchOrder1, portOf, tokenOf, withServer } from './servers';
import { GQL_CEILING, ROUNDS, SERVICE_ENV, SLOW_CONNECTIONS, SLOW_RATE, SLOW_SECONDS, STREAM_CLIENT, log, sleep } from './settings';
import { connect } from 'node:net';
// ---- one slow request must not stall streams ----------------------------------------

/** POST /orders with its body trickled one byte at a time over `ms`; resolves with the status. */
export function tricklePost(svc: Running, token: string, ms: number): Promise<{ status: number; ms: number }> {
  const u = new URL(svc.url);
  const body = Buffer.from(JSON.stringify({ items: [{ sku: 'TRICKLE-1', quantity: 1, unit_price_cents: 100 }], currency: 'EUR', note: 'trickled' }));
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const s = connect({ host: u.hostname, port: Number(u.port) });
    s.setNoDelay(true);
    let answer = '';
    s.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
      if (answer.includes('\r\n\r\n')) {
        s.destroy();
        resolve({ status: Number(answer.split(' ')[1]), ms: Date.now() - started });
      }
    });
    s.on('error', reject);
    s.once('connect', () => {
      void (async () => {
        s.write(`POST /orders HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` + `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
        const step = ms / body.length;
        for (let i = 0; i < body.length; i++) {
          await sleep(step);
          if (s.destroyed) return;
          s.write(body.subarray(i, i + 1));
        }
      })();
    });
  });
}

/** GraphQL queries at the cost ceiling, one in flight at a time, until `stop()`. */
export function graphqlLoop(svc: Running, token: string): { stop: () => Promise<{ count: number; statuses: Record<number, number>; maxMs: number; meanMs: number }> } {
  let running = true;
  let count = 0;
  let maxMs = 0;
  let totalMs = 0;
  const statuses: Record<number, number> = {};
  const body = JSON.stringify({ query: GQL_CEILING });
  const loop = (async () => {
    while (running) {
      const t = Date.now();
      const r = await call(`${svc.url}/graphql`, 'POST', { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/graphql-response+json' }, body);
      const ms = Date.now() - t;
      count++;
      totalMs += ms;
      maxMs = Math.max(maxMs, ms);
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { count, statuses, maxMs, meanMs: count ? totalMs / count : 0 };
    },
  };
}

export async function slowPhase(clients: Clients): Promise<Row[]> {
  return withServer(
    () => startService(SERVICE_ENV),
    async (svc) => {
      const token = await tokenOf(svc);
      const pids = [pidOfPort(portOf(svc))];
      const o = await clients.openWs(
        'slow',
        svc,
        token,
        Array.from({ length: SLOW_CONNECTIONS }, () => 'order:1'),
        STREAM_CLIENT,
      );
      log(`slow: opened ${o.opened}/${SLOW_CONNECTIONS} in ${o.ms} ms${o.failed ? `, ${o.failed} failed (${o.firstError})` : ''}`);
      const publish = patchOrder1(svc, token);
      const steady: Mode = { kind: 'steady', rate: SLOW_RATE };
      await measureRun(clients, 'slow', publish, pids, steady, 1); // warm-up
      const windows: { name: string; label: string; start: () => () => Promise<string> }[] = [
        { name: 'none', label: 'no slow request', start: () => async () => '' },
        {
          name: 'trickle',
          label: `one POST /orders whose body is trickled byte by byte over ${SLOW_SECONDS} s`,
          start: () => {
            const p = tricklePost(svc, token, SLOW_SECONDS * 1000);
            return async () => {
              const r = await p;
              return `trickled POST answered ${r.status} after ${(r.ms / 1000).toFixed(1)} s`;
            };
          },
        },
        {
          name: 'graphql',
          label: 'GraphQL queries at the cost ceiling back to back (one always in flight)',
          start: () => {
            const g = graphqlLoop(svc, token);
            return async () => {
              const r = await g.stop();
              const st = Object.entries(r.statuses)
                .map(([k, v]) => `${k}x${v}`)
                .join(',');
              return `${r.count} queries (${st}), mean ${r.meanMs.toFixed(1)} ms, max ${r.maxMs} ms`;
            };
          },
        },
      ];
      // Windows alternate (none, trickle, graphql, none, ...) for BENCH_RT_ROUNDS rounds.
      const per = new Map<string, { runs: RunResult[]; loops: number[]; notes: string[] }>(windows.map((w) => [w.name, { runs: [], loops: [], notes: [] }]));
      for (let round = 0; round < ROUNDS; round++) {
        for (const w of windows) {
          await loopP99(svc); // resets the histogram
          const stop = w.start();
          const run = await measureRun(clients, 'slow', publish, pids, steady, SLOW_SECONDS);
          const note = await stop();
          const loop = await loopP99(svc);
          log(`slow ${w.name} round ${round + 1}/${ROUNDS}: loop p99 ${loop?.toFixed(1)} ms; ${fmtRun(run)}${note ? `; ${note}` : ''}`);
          const acc = per.get(w.name)!;
          acc.runs.push(run);
          if (loop !== undefined) acc.loops.push(loop);
          if (note) acc.notes.push(`round ${round + 1}: ${note}`);
        }
      }
      await clients.all({ cmd: 'close', group: 'slow' });
      // Worst round, as in the other tables.
      const results = windows.map((w) => {
        const acc = per.get(w.name)!;
        return { name: w.name, label: w.label, run: combineRuns(acc.runs), loop: acc.loops.length ? Math.max(...acc.loops) : undefined, notes: acc.notes };
      });
      const none = results[0];
      const fig = (r: (typeof results)[number]) => `loop p99 ${r.loop?.toFixed(1) ?? 'n/a'} ms; delivery p99 ${r.run.p99.toFixed(1)} ms`;
      return results.map((r) => ({
        scenario: `slow-${r.name}`,
        service: `${r.run.subscribers} WebSocket subscribers of order:1, PATCH at ${SLOW_RATE}/s, ${ROUNDS} x ${SLOW_SECONDS} s windows; ${r.label}`,
        baseline: r === none ? 'reference for the slow-* rows' : 'the same service in the same run, no slow request (slow-none)',
        serviceFig: fig(r),
        baselineFig: r === none ? '' : fig(none),
        ratio: r === none ? undefined : r.run.p99 / none.run.p99,
        goal: r === none ? 'reference' : 'streams not stalled (delivery p99 ratio near 1)',
        notes:
          `delivery p50 ${r.run.p50.toFixed(1)} ms, max ${r.run.max.toFixed(0)} ms, ${r.run.delivered}/${r.run.expected} delivered` +
          `${r.run.errors ? `, ${r.run.errors} writes failed` : ''}; server CPU ${(r.run.serverCpu * 100).toFixed(0)}%` +
          `${r.notes.length ? `; ${r.notes.join('; ')}` : ''}`,
      }));
    },
  );
}
