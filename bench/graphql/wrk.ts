/**
 * One wrk run (1 thread, BENCH_CONNECTIONS connections) of one POST request repeated:
 * the body and headers go into a Lua script, the summary is parsed for req/s, latency
 * and non-2xx responses.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface WrkLoad {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export interface WrkResult {
  rps: number;
  /** Mean latency, ms. */
  latencyMs: number;
  non2xx: number;
  requests: number;
}

/** A Lua long string that cannot be closed by the content. */
function luaString(s: string): string {
  let eq = '=';
  while (s.includes(`]${eq}]`)) eq += '=';
  return `[${eq}[${s}]${eq}]`;
}

function script(load: WrkLoad): string {
  return ['wrk.method = "POST"', `wrk.body = ${luaString(load.body)}`, ...Object.entries(load.headers).map(([k, v]) => `wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`)].join('\n');
}

function ms(value: string, unit: string): number {
  const n = Number(value);
  return unit === 'us' ? n / 1000 : unit === 's' ? n * 1000 : n;
}

export async function wrk(load: WrkLoad, seconds: number, connections: number): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-wrk-'));
  try {
    const file = join(dir, 'load.lua');
    writeFileSync(file, script(load));
    const { stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '-s', file, load.url], { maxBuffer: 1 << 20 });
    const rps = /Requests\/sec:\s+([\d.]+)/.exec(stdout);
    const lat = /Latency\s+([\d.]+)(us|ms|s)\b/.exec(stdout);
    const total = /(\d+) requests in/.exec(stdout);
    if (!rps || !lat || !total) throw new Error(`wrk printed no summary:\n${stdout}`);
    return {
      rps: Number(rps[1]),
      latencyMs: ms(lat[1], lat[2]),
      non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0),
      requests: Number(total[1]),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
