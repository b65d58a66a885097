/**
 * The three sides of bench:limits in one process (run by bench/limits.ts, not by hand):
 * "off" (the defaults), "control" (the defaults again) and "on" (the limits so high that
 * nothing is refused), each a whole app from createApp over its own embedded store and
 * its own node:http server. "off" listens on PORT (so the bench's readiness check finds
 * it); the others on free ports. Prints one line: `sides <JSON>` with each side's URL and
 * demo token.
 *
 * Why one process: two identical services in two processes differed by up to 5 % in CPU
 * per request, persistently, for the life of each process (JIT and memory layout luck,
 * 2026-11-25), as much as the effect measured. In one process the sides share the
 * compiled code and the heap, and only the code a request runs differs.
 */
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { parseConfig } from '../src/config';
import { createApp } from '../src/app';
import { Metrics } from '../src/http';
import { openConfiguredStore, prepareDemo } from '../src/startup';

/** Never refuses at these rates, yet every request is counted and its headers or extensions built. */
const ON = { RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000', GRAPHQL_COST_BUDGET: '1000000000', GRAPHQL_COST_RESTORE_RATE: '1000000000' };
const SIDES = { off: {}, control: {}, on: ON } as const;

async function side(env: Record<string, string>, port: number): Promise<{ url: string; token: string }> {
  const parsed = parseConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), 'orderline-bench-limits-side-')), LOG_LEVEL: 'silent', NODE_ENV: 'production', ...env });
  if (!parsed.ok) throw new Error(parsed.error);
  const store = await openConfiguredStore(parsed.config);
  const demo = await prepareDemo(parsed.config, store);
  if (!demo.token) throw new Error('no demo token');
  const { listener } = createApp({ config: parsed.config, store, logger: pino({ level: 'silent' }), metrics: new Metrics() });
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: demo.token };
}

async function main(): Promise<void> {
  const out: Record<string, { url: string; token: string }> = {};
  // "off" last: its port is the one the bench polls for readiness.
  for (const name of ['control', 'on', 'off'] as const) out[name] = await side(SIDES[name], name === 'off' ? Number(process.env.PORT) : 0);
  process.stdout.write(`sides ${JSON.stringify(out)}\n`);
  process.on('SIGTERM', () => process.exit(0));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
