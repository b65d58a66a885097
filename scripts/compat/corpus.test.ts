/**
 * The mutation corpus (mutations.ts) through the real gate: oasdiff as a child
 * process, @asyncapi/diff and @graphql-inspector in process. All mutations run up
 * front, a few at a time, so the corpus takes seconds; each test then reads its verdict.
 */
import { cpus } from 'node:os';
import { join } from 'node:path';
import { runGate, type GateResult } from './index';
import { BREAKING, COMPATIBLE, CORPUS, materialize, type Mutation } from './mutations';
import { formatFinding, formatReport, groupByCause } from './report';

const REPO_CONTRACTS = join(__dirname, '..', '..', 'contracts');
const CONCURRENCY = Math.max(2, Math.min(8, cpus().length));

type Outcome = { result: GateResult; report: string } | { error: Error };
const outcomes = new Map<string, Outcome>();

async function run(m: Mutation): Promise<Outcome> {
  const { contracts, cleanup } = materialize(REPO_CONTRACTS, m);
  try {
    const result = await runGate({ contracts });
    return { result, report: formatReport(result.results) };
  } catch (error) {
    return { error: error as Error };
  } finally {
    cleanup();
  }
}

beforeAll(async () => {
  const queue = [...CORPUS];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let m = queue.shift(); m; m = queue.shift()) outcomes.set(m.name, await run(m));
    }),
  );
}, 120_000);

function verdict(name: string): { result: GateResult; report: string } {
  const o = outcomes.get(name);
  if (!o) throw new Error(`${name}: not run`);
  if ('error' in o) throw o.error;
  return o;
}

test('the corpus has at least 20 breaking mutations over every kind and 10 additive ones', () => {
  expect(BREAKING.length).toBeGreaterThanOrEqual(20);
  expect(COMPATIBLE.length).toBeGreaterThanOrEqual(10);
  const kinds = new Set(BREAKING.flatMap((m) => m.kinds ?? []));
  expect([...kinds].sort()).toEqual(['asyncapi', 'graphql', 'openapi', 'operations']);
});

describe.each(BREAKING.map((m) => [m.name, m] as const))('%s', (_name, m) => {
  test('fails the gate and names it', () => {
    const { result, report } = verdict(m.name);
    expect(result.compatible).toBe(false);
    for (const kind of m.kinds ?? []) expect(result.findings.some((f) => f.kind === kind)).toBe(true);
    for (const word of m.mentions ?? []) expect(report).toContain(word);
    const causes = groupByCause(result.results);
    expect(report).toMatch(new RegExp(`^compat: ${causes.length} breaking changes? against contracts/released/ \\(${result.findings.length} findings?\\)`));
    if (m.causes) expect(causes.map((c) => c.title)).toEqual(m.causes);
    // Every finding is one self-contained report line.
    for (const f of result.findings) expect(report).toContain(formatFinding(f));
  });
});

describe.each(COMPATIBLE.map((m) => [m.name, m] as const))('%s', (_name, m) => {
  test('passes the gate', () => {
    const { result, report } = verdict(m.name);
    expect(report).toMatch(/^compat: compatible/);
    expect(result.findings).toEqual([]);
  });
});
