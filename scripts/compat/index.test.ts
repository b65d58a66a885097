import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main, runGate } from './index';
import { BREAKING, materialize, type Mutation } from './mutations';

const ROOT = join(__dirname, '..', '..');
const CONTRACTS = join(ROOT, 'contracts');
const identity: Mutation = { name: 'no change', expect: 'compatible', apply: () => undefined };

/** Runs the CLI entry on `root`, capturing what it prints. */
async function cli(root: string): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(
    root,
    (s) => (out += `${s}\n`),
    (s) => (err += `${s}\n`),
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

  it('exits 1 with the report on a breaking change', async () => {
    const { contracts, cleanup } = materialize(CONTRACTS, BREAKING[0]);
    try {
      const { code, out } = await cli(join(contracts, '..'));
      expect(code).toBe(1);
      expect(out).toMatch(/^compat: \d+ breaking changes against contracts\/released\//);
      expect(out).toContain('openapi: GET /v1/orders/{orderId}: removed the required property `note` from the response');
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
