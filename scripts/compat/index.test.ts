import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { main, runGate } from './index';
import { BREAKING, materialize, type Mutation } from './mutations';

const OUT = mkdtempSync(join(tmpdir(), 'orderline-compat-ci-'));
afterAll(() => rmSync(OUT, { recursive: true, force: true }));

const ROOT = join(__dirname, '..', '..');
const CONTRACTS = join(ROOT, 'contracts');
const identity: Mutation = { name: 'no change', expect: 'compatible', apply: () => undefined };

/** Runs the CLI entry on `root`, capturing what it prints. */
async function cli(root: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(
    root,
    (s) => (out += `${s}\n`),
    (s) => (err += `${s}\n`),
    env,
  );
  return { code, out, err };
}

describe('npm run compat', () => {
  it('passes the current contracts against contracts/released (exit 0, one summary line per kind)', async () => {
    const { code, out } = await cli(ROOT);
    expect(code).toBe(0);
    expect(out).toMatch(/^compat: compatible/);
    for (const kind of ['openapi', 'asyncapi', 'graphql', 'operations']) expect(out).toMatch(new RegExp(`^  ${kind}: compatible`, 'm'));
  });

  it('passes the current contracts re-serialized (every engine runs, none skipped as byte-identical)', async () => {
    const { contracts, cleanup } = materialize(CONTRACTS, identity, true);
    try {
      const result = await runGate({ contracts });
      expect(result.findings).toEqual([]);
      expect(result.results.find((r) => r.kind === 'openapi')?.checked).toMatch(/checked against the release/);
      expect(result.results.find((r) => r.kind === 'asyncapi')?.checked).not.toMatch(/unchanged/);
    } finally {
      cleanup();
    }
  });

  it('leaves nothing behind in the temporary folder, run after run', async () => {
    const { contracts, cleanup } = materialize(CONTRACTS, BREAKING[0]);
    const tmp = mkdtempSync(join(tmpdir(), 'orderline-compat-tmp-'));
    try {
      const run = promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', join(__dirname, 'index.ts'), join(contracts, '..')], { cwd: ROOT, env: { ...process.env, TMPDIR: tmp } });
      await expect(run).rejects.toMatchObject({ code: 1 });
      expect(readdirSync(tmp).filter((name) => name.startsWith('orderline-'))).toEqual([]); // tsx keeps its own cache there
    } finally {
      rmSync(tmp, { recursive: true, force: true });
      cleanup();
    }
  }, 60_000);

  it('exits 1 with the report on a breaking change', async () => {
    const { contracts, cleanup } = materialize(CONTRACTS, BREAKING[0]);
    try {
      const { code, out } = await cli(join(contracts, '..'));
      expect(code).toBe(1);
      expect(out).toMatch(/^compat: \d+ breaking changes? against contracts\/released\//);
      expect(out).toContain('openapi: GET /v1/orders/{orderId}: removed the required property `note` from the response');
    } finally {
      cleanup();
    }
  });

  it('for CI: GitHub annotations on the contract line, the Markdown job summary and JUnit XML, one entry per cause', async () => {
    const noteOfOrderV2 = BREAKING.find((m) => m.causes?.[0] === '`OrderV2.note` removed') as Mutation;
    const { contracts, cleanup } = materialize(CONTRACTS, noteOfOrderV2);
    try {
      const summary = join(OUT, 'summary.md');
      const junit = join(OUT, 'compat.xml');
      writeFileSync(summary, '# earlier steps\n');
      const { code, out } = await cli(join(contracts, '..'), { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary, COMPAT_JUNIT: junit });
      expect(code).toBe(1);
      const annotations = out.split('\n').filter((l) => l.startsWith('::error '));
      expect(annotations).toHaveLength(1);
      // The line of OrderV2's `properties:` in the edited file: the removed `note` was there.
      const line = Number(/line=(\d+)/.exec(annotations[0])?.[1]);
      const text = readFileSync(join(contracts, 'openapi.yaml'), 'utf8').split('\n');
      expect(text[line - 1].trim()).toBe('properties:');
      expect(
        text
          .slice(0, line)
          .reverse()
          .find((l) => /^ {4}\S/.test(l))
          ?.trim(),
      ).toBe('OrderV2:');
      expect(annotations[0]).toContain('file=contracts/openapi.yaml');
      expect(annotations[0]).toContain('title=compat%3A OrderV2.note removed::OrderV2.note removed [response-required-property-removed] breaks 25 ');
      const md = readFileSync(summary, 'utf8');
      expect(md).toMatch(/^# earlier steps\n## Compatibility gate: 1 breaking change\n/);
      expect(md).toContain('- message payloads: **message OrderEventMessage**: removed the required property `order/note` from the message');
      expect(md.split('\n').filter((l) => l.startsWith('- ')).length).toBe(25);
      const xml = readFileSync(junit, 'utf8');
      expect(xml).toContain('<testsuites name="compat" tests="3" failures="1">');
      expect(xml).toContain('<testcase classname="contracts/openapi.yaml" name="`OrderV2.note` removed"><failure');
    } finally {
      cleanup();
    }
  });

  it('exits 2 naming every missing file, with the way to create the snapshot', async () => {
    const { contracts, cleanup } = materialize(CONTRACTS, identity);
    try {
      rmSync(join(contracts, 'released', 'schema.graphql'));
      rmSync(join(contracts, 'released', 'asyncapi.yaml'));
      const { code, err } = await cli(join(contracts, '..'));
      expect(code).toBe(2);
      expect(err).toMatch(/could not run: missing: .*released\/asyncapi\.yaml.*released\/schema\.graphql.*npm run release/);
    } finally {
      cleanup();
    }
  });

  it('exits 2 on a malformed accepted-changes file', async () => {
    const { contracts, cleanup } = materialize(CONTRACTS, identity);
    try {
      writeFileSync(join(contracts, 'compat-accepted.yaml'), 'graphql:\n  - path: A.b\n');
      const { code, err } = await cli(join(contracts, '..'));
      expect(code).toBe(2);
      expect(err).toContain('compat-accepted.yaml: graphql[0] needs a non-empty `message`');
    } finally {
      cleanup();
    }
  });
});
